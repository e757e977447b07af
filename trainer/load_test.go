package trainer_test

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/data"
	"github.com/transformer-go/transformer/model"
	"github.com/transformer-go/transformer/trainer"
)

// savedRun writes a run directory holding a model of kind with random
// weights as final.safetensors, and the numbers corpus's tokenizer.
func savedRun(t *testing.T, kind string) (string, *data.Tokenizer) {
	t.Helper()
	dir := t.TempDir()
	m, _, d := numbersRun()
	tok := d.Tokenizer
	if err := tok.BPE.WriteFile(filepath.Join(dir, "bpe.txt")); err != nil {
		t.Fatal(err)
	}
	if err := tok.Vocab.WriteFile(filepath.Join(dir, "vocab.txt")); err != nil {
		t.Fatal(err)
	}
	meta := map[string]string{data.BPEFingerprintKey: tok.BPE.Fingerprint(), data.VocabFingerprintKey: tok.Vocab.Fingerprint()}
	cfg := m.Config()
	cfg.Kind = kind
	m, err := model.FromConfig(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	params, err := model.NewParams(m, tensor.Float32, rand.New(rand.NewPCG(4, 4)))
	if err != nil {
		t.Fatal(err)
	}
	if err := model.SaveCheckpoint(filepath.Join(dir, "final.safetensors"), cfg, params, meta); err != nil {
		t.Fatal(err)
	}
	return dir, tok
}

// TestLoadRun loads run directories of each kind, and refuses a
// tokenizer edited since training.
func TestLoadRun(t *testing.T) {
	sentences := []string{"drei eins vier", "neun"}
	search := model.Search{Method: model.MethodGreedy, MaxLen: 4, Batch: 2}
	dir, _ := savedRun(t, model.KindEncoderOnly)
	r, err := trainer.LoadRun(dir, "final")
	if err != nil {
		t.Fatal(err)
	}
	if r.Tokenizer == nil || r.Path != filepath.Join(dir, "final.safetensors") || r.Model.Config().Kind != model.KindEncoderOnly {
		t.Fatalf("loaded %+v", r)
	}
	if tags, err := r.Tag(sentences); err != nil || len(tags) != 2 {
		t.Errorf("Tag: %q, %v", tags, err)
	}
	if _, err := r.Translate(sentences, search); err == nil || !strings.Contains(err.Error(), "a model that generates") {
		t.Errorf("Translate with an encoder-only model: %v", err)
	}
	if _, err := r.Continue(sentences, search); err == nil || !strings.Contains(err.Error(), "needs a decoder-only model") {
		t.Errorf("Continue with an encoder-only model: %v", err)
	}

	dir, tok := savedRun(t, model.KindDecoderOnly)
	r, err = trainer.LoadRun(dir, filepath.Join(dir, "final.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Continue(sentences, search)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := model.NewDecoder(nil, r.Model, r.Params)
	defer d.Close()
	for i, s := range sentences {
		want, err := d.Decode([][]int{tok.Encode(s)}, search)
		if err != nil || got[i] != tok.Decode(want[0][0].Tokens) {
			t.Errorf("Continue(%q) = %q, the decoder's continuation %q (%v)", s, got[i], tok.Decode(want[0][0].Tokens), err)
		}
	}
	if _, err := r.Tag(sentences); err == nil || !strings.Contains(err.Error(), "needs an encoder-only model") {
		t.Errorf("Tag with a decoder-only model: %v", err)
	}

	vocabFile, _ := os.ReadFile(filepath.Join(dir, "vocab.txt"))
	lines := strings.SplitAfter(string(vocabFile), "\n")
	lines[len(lines)-2], lines[len(lines)-3] = lines[len(lines)-3], lines[len(lines)-2] // the last two tokens swapped
	os.WriteFile(filepath.Join(dir, "vocab.txt"), []byte(strings.Join(lines, "")), 0o644)
	if _, err := trainer.LoadRun(dir, "final"); err == nil || !strings.Contains(err.Error(), "vocab.txt is not the file the model was trained with") {
		t.Errorf("an edited vocab.txt: %v", err)
	}
	if _, err := trainer.LoadRun(dir, "best"); err == nil || !strings.Contains(err.Error(), "best.safetensors") {
		t.Errorf("a missing checkpoint: %v", err)
	}
	// A run on text is refused without its tokenizer.
	os.Remove(filepath.Join(dir, "bpe.txt"))
	os.Remove(filepath.Join(dir, "vocab.txt"))
	if _, err = trainer.LoadRun(dir, "final"); err == nil || !strings.Contains(err.Error(), "trained on text") || !strings.Contains(err.Error(), "bpe.txt and ") {
		t.Fatalf("a run on text without bpe.txt and vocab.txt: %v, want an error naming them", err)
	}
}
