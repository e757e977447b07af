package trainer

import (
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// withState rewrites the state file at path with the trainer state text in
// its metadata, keeping its tensors, into dir.
func withState(t testing.TB, path, dir, text string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := binary.LittleEndian.Uint64(raw[:8])
	var header map[string]json.RawMessage
	if err := json.Unmarshal(raw[8:8+n], &header); err != nil {
		t.Fatal(err)
	}
	meta, _ := json.Marshal(map[string]string{stateKey: text})
	header["__metadata__"] = meta
	h, _ := json.Marshal(header)
	out := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
	out = append(append(out, h...), raw[8+n:]...)
	p := filepath.Join(dir, "step-00000003.state.safetensors")
	if err := os.WriteFile(p, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// FuzzRestoreState restores a run's state from any trainer_state text (the
// JSON of the step, the data position, the dropout generator, the best
// loss and the time): an error, or a state of the step whose data
// position gives a batch; never a panic.
func FuzzRestoreState(f *testing.F) {
	dir := f.TempDir()
	opt := options(dir, 8)
	first := newFixture(f)
	tr, err := New(first.m, first.params, first.data, opt, Quiet)
	if err != nil {
		f.Fatal(err)
	}
	tr.adam.Step = 3
	good := filepath.Join(dir, "good.state.safetensors")
	if err := tr.saveState(good); err != nil {
		f.Fatal(err)
	}
	st, err := tr.currentState()
	if err != nil {
		f.Fatal(err)
	}
	js, _ := json.Marshal(st)
	for _, s := range []string{string(js), `{"step":3}`, `{"step":3,"batcher":{"examples":400,"index":-1}}`,
		`{"step":3,"rng":"!!","batcher":{"examples":400}}`, `{"step":3,"elapsed_s":1e309}`, "", "null", `{"step":3,"batcher":{"examples":400,"epoch":9223372036854775807}}`} {
		f.Add(s)
	}
	fx := newFixture(f) // each restore sets the whole data position
	f.Fuzz(func(t *testing.T, text string) {
		tr2, err := New(fx.m, fx.params, fx.data, options(t.TempDir(), 8), Quiet)
		if err != nil {
			t.Fatal(err)
		}
		p := withState(t, good, t.TempDir(), text)
		if err := tr2.restoreState(p, 3); err != nil {
			return
		}
		if tr2.adam.Step != 3 {
			t.Fatalf("restored step %d from a state of step 3", tr2.adam.Step)
		}
		if b := tr2.data.Train.Next(); b.Rows == 0 || len(b.TgtOut) == 0 {
			t.Fatalf("the restored data position gives an empty batch")
		}
	})
}
