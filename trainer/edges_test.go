package trainer

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/transformer-go/transformer/graph/safetensors"
)

// TestResumeKeepsTheRunsRecords interrupts a run between evaluations and
// off its checkpoint schedule, resumes it, and checks that it leaves what
// a run never interrupted leaves: the training loss of metrics.jsonl
// (the loss window is in the saved state), the per-step losses of
// LogEvery, the checkpoints kept (the interruption's is not one of the
// series) and their average.
func TestResumeKeepsTheRunsRecords(t *testing.T) {
	const steps = 12
	opt := options("", steps) // EvalEvery 4, SaveEvery 3
	opt.KeepLast, opt.LogEvery = 4, 2
	opt.OutDir = t.TempDir()
	wholeRunWith(t, opt)
	whole := opt.OutDir
	opt.OutDir = t.TempDir()
	interruptedRunWith(t, opt, 5)
	resumedRunWith(t, opt)
	want, got := losses(t, whole), losses(t, opt.OutDir)
	if len(want) != 9 || !reflect.DeepEqual(got, want) {
		t.Errorf("losses of metrics.jsonl (step: train, validation, step loss):\nresumed %v\nwhole   %v", got, want)
	}
	var averaged [2][]byte
	for i, dir := range []string{whole, opt.OutDir} {
		paths, err := Checkpoints(dir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, p := range paths {
			names = append(names, filepath.Base(p))
		}
		if want := []string{"step-00000003.safetensors", "step-00000006.safetensors", "step-00000009.safetensors", "step-00000012.safetensors"}; !reflect.DeepEqual(names, want) {
			t.Errorf("%s: checkpoints %v, want %v", dir, names, want)
		}
		out := filepath.Join(t.TempDir(), "averaged.safetensors")
		if err := Average(paths, out); err != nil {
			t.Fatal(err)
		}
		averaged[i], _ = os.ReadFile(out)
	}
	if !bytes.Equal(averaged[0], averaged[1]) {
		t.Error("the resumed run's averaged weights differ from those of the run never interrupted")
	}
}

// losses are the losses of each line of dir/metrics.jsonl.
func losses(t *testing.T, dir string) []string {
	t.Helper()
	ms, err := ReadMetrics(filepath.Join(dir, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range ms {
		step := "-"
		if m.StepLoss != nil {
			step = strconv.FormatFloat(*m.StepLoss, 'g', -1, 64)
		}
		out = append(out, fmt.Sprintf("%d: %v %v %s", m.Step, m.TrainLoss, m.ValLoss, step))
	}
	return out
}

// TestLogEvery logs the loss of every second update, in metrics.jsonl
// and through the reporter: each is the loss of its update alone.
func TestLogEvery(t *testing.T) {
	f := newFixture(t)
	opt := options(t.TempDir(), 6)
	opt.LogEvery = 2
	rec := &recorder{}
	tr, err := New(f.m, f.params, f.data, opt, rec)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	ms, err := ReadMetrics(filepath.Join(opt.OutDir, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var logged []int
	for _, m := range ms {
		if !m.IsEvaluation() {
			logged = append(logged, m.Step)
			if *m.StepLoss != rec.loss[m.Step] || !(*m.StepLoss > 0) {
				t.Errorf("step %d: step_loss %v in metrics.jsonl, %v reported", m.Step, *m.StepLoss, rec.loss[m.Step])
			}
		}
	}
	if !reflect.DeepEqual(logged, []int{2, 4, 6}) || !reflect.DeepEqual(rec.logged, logged) {
		t.Errorf("steps logged: %v in metrics.jsonl, %v reported; want 2, 4 and 6", logged, rec.logged)
	}
	if rec.loss[1] == rec.loss[2] {
		t.Errorf("steps 1 and 2 have the same loss %v: not each update's own", rec.loss[1])
	}
}

// recorder records the steps reported.
type recorder struct {
	quiet
	loss   map[int]float64
	logged []int
}

func (r *recorder) Step(s StepInfo) {
	if r.loss == nil {
		r.loss = map[int]float64{}
	}
	r.loss[s.Step] = s.StepLoss
	if s.Logged {
		r.logged = append(r.logged, s.Step)
	}
}

// renamer renames the run's directory after a step, as a user's mv would,
// and makes a new one in its place if fresh is set.
type renamer struct {
	quiet
	t          *testing.T
	dir, fresh string
	step       int
}

func (r renamer) Step(s StepInfo) {
	if s.Step != r.step {
		return
	}
	if err := os.Rename(r.dir, r.dir+"-old"); err != nil {
		r.t.Error(err)
	}
	if r.fresh != "" {
		if err := os.MkdirAll(r.dir, 0o755); err != nil {
			r.t.Error(err)
		}
		if err := os.WriteFile(filepath.Join(r.dir, r.fresh), []byte("x"), 0o644); err != nil {
			r.t.Error(err)
		}
	}
}

// TestRenamedDirectoryStopsTheRun renames the output directory while the
// run trains: the run stops with an error naming it, and writes neither
// into a new directory at the path nor makes one.
func TestRenamedDirectoryStopsTheRun(t *testing.T) {
	for _, fresh := range []string{"", "new-run.txt"} {
		f := newFixture(t)
		opt := options(filepath.Join(t.TempDir(), "run"), 8)
		tr, err := New(f.m, f.params, f.data, opt, renamer{t: t, dir: opt.OutDir, fresh: fresh, step: 2})
		if err != nil {
			t.Fatal(err)
		}
		err = tr.Run(context.Background())
		if err == nil || !strings.Contains(err.Error(), "output directory "+opt.OutDir+" is no longer the one this run started in") {
			t.Errorf("new directory %q: Run: %v", fresh, err)
		}
		entries, _ := os.ReadDir(opt.OutDir)
		switch {
		case fresh == "" && entries != nil:
			t.Errorf("the run made %s again: %v", opt.OutDir, entries)
		case fresh != "" && (len(entries) != 1 || entries[0].Name() != fresh):
			t.Errorf("the run wrote into the new %s: %v", opt.OutDir, entries)
		}
	}
}

// TestResumeRefusesNonFiniteMoments writes a NaN into a moment of the
// newest state file: Resume skips that checkpoint, naming the file and
// the tensor, and resumes from the one before.
func TestResumeRefusesNonFiniteMoments(t *testing.T) {
	dir := t.TempDir()
	interruptedRun(t, dir, 8, 5) // checkpoints of steps 3 and 5
	path := filepath.Join(dir, "checkpoints", "step-00000005.state.safetensors")
	f, err := safetensors.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	name := f.Names()[0]
	ts := f.Tensors[name]
	binary.LittleEndian.PutUint32(ts.Data[4:], math.Float32bits(float32(math.NaN())))
	f.Tensors[name] = ts
	var all []safetensors.Tensor
	for _, n := range f.Names() {
		all = append(all, f.Tensors[n])
	}
	if err := safetensors.Write(path, all, f.Metadata); err != nil {
		t.Fatal(err)
	}
	fx := newFixture(t)
	tr, _ := New(fx.m, fx.params, fx.data, options(dir, 8), Quiet)
	r, err := tr.Resume(dir)
	if err != nil {
		t.Fatal(err)
	}
	if r.Step != 3 || len(r.Skipped) != 1 || !strings.Contains(r.Skipped[0].Error(), path+": tensor "+name+" holds NaN at index 1") {
		t.Errorf("resumed %+v, want step 3 after skipping %s for its NaN in %s", r, path, name)
	}
}
