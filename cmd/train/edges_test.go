package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/transformer-go/transformer/internal/sysmem"
	"github.com/transformer-go/transformer/trainer"
	"github.com/transformer-go/transformer/trainer/dist"
)

// TestGivenZerosAreUsed trains with -warmup 0 and -weight-decay 0, which
// once became 100 and 0.01: run.json records the zeros, and the first
// update has the peak rate, with no warm-up.
func TestGivenZerosAreUsed(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	args := []string{"-schedule", "constant", "-warmup", "0", "-optimizer", "adamw", "-weight-decay", "0", "-lr", "2e-3",
		"-steps", "2", "-eval-every", "1", "-max-tokens", "128", "-train-size", "50", "-held-out", "8", "-out", dir}
	var out, errb bytes.Buffer
	if err := run(context.Background(), dist.Alone(), args, &out, &errb); err != nil {
		t.Fatal(err, errb.String())
	}
	var saved map[string]any
	js, _ := os.ReadFile(filepath.Join(dir, "run.json"))
	if err := json.Unmarshal(js, &saved); err != nil {
		t.Fatal(err)
	}
	if saved["warmup"] != 0.0 || saved["weight_decay"] != 0.0 || saved["lr"] != 2e-3 {
		t.Errorf("run.json: warmup %v, weight_decay %v, lr %v; want 0, 0 and 0.002", saved["warmup"], saved["weight_decay"], saved["lr"])
	}
	ms, err := trainer.ReadMetrics(filepath.Join(dir, "metrics.jsonl"))
	if err != nil || len(ms) == 0 {
		t.Fatalf("metrics %v, %v", ms, err)
	}
	if ms[0].Step != 1 || ms[0].LR != 2e-3 {
		t.Errorf("rate of step %d: %v, want the peak 0.002 without warm-up", ms[0].Step, ms[0].LR)
	}
}

// TestIdleFlagsAreRefused gives flags that would do nothing: each is
// refused naming it, and nothing is made.
func TestIdleFlagsAreRefused(t *testing.T) {
	files := writeCorpus(t)
	onFiles := []string{"-task", "files", "-train-src", files[0], "-train-tgt", files[1], "-valid-src", files[2], "-valid-tgt", files[3]}
	data := filepath.Dir(files[0])
	tests := []struct {
		args []string
		want string
	}{
		{append(onFiles, "-bpe", files[0], "-bpe-merges", "10"), "-bpe-merges has no effect with -bpe"},
		{append(onFiles, "-src-lang", "fr"), "-src-lang has no effect without -data"},
		{append(onFiles, "-tgt-lang", "fr"), "-tgt-lang has no effect without -data"},
		{[]string{"-task", "files", "-data", data, "-bleu-every", "0", "-bleu-sample", "5", "-steps", "2"}, "-bleu-sample has no effect with -bleu-every 0"},
		{[]string{"-task", "files", "-data", data, "-model", "encoder-only", "-bleu-every", "2", "-steps", "2"}, "-bleu-every has no effect with a model that does not translate"},
		{[]string{"-check-every", "10"}, "-check-every has no effect in one process"},
		{[]string{"-summary", "-steps", "5"}, "-steps has no effect with -summary"},
		{[]string{"-summary", "-lr", "1e-3"}, "-lr has no effect with -summary"},
		{[]string{"-summary", "-overwrite"}, "-overwrite has no effect with -summary"},
	}
	for _, tc := range tests {
		refused(t, tc.args, tc.want)
	}
	// A decoder-only model trained on pairs translates: its BLEU flags work.
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	f := newFlags(fs)
	if err := fs.Parse([]string{"-task", "files", "-data", data, "-model", "decoder-only", "-bleu-every", "2", "-steps", "2"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.settings(fs); err != nil {
		t.Errorf("-bleu-every with a decoder-only model on pairs: %v", err)
	}
}

// TestRunJSONLeavesOutIdleMerges completes the settings of a run that
// loads its BPE merges, and of one on a synthetic task: run.json records
// no -bpe-merges, which neither uses.
func TestRunJSONLeavesOutIdleMerges(t *testing.T) {
	files := writeCorpus(t)
	for _, args := range [][]string{
		{"-task", "files", "-train-src", files[0], "-train-tgt", files[1], "-valid-src", files[2], "-valid-tgt", files[3], "-bpe", files[0], "-steps", "2"},
		{"-steps", "2"},
	} {
		fs := flag.NewFlagSet("train", flag.ContinueOnError)
		f := newFlags(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		s, err := f.settings(fs)
		if err != nil {
			t.Fatal(err)
		}
		js, _ := json.Marshal(s)
		if strings.Contains(string(js), "bpe_merges") {
			t.Errorf("%v: run.json would record the merges: %s", args, js)
		}
	}
}

// TestRefusedRunReplacesNoFile refuses a run on missing data: the files
// of -cpuprofile and -memprofile are as they were, and the parents of
// -out that the run made are gone.
func TestRefusedRunReplacesNoFile(t *testing.T) {
	dir := t.TempDir()
	cpu, mem := filepath.Join(dir, "cpu.prof"), filepath.Join(dir, "mem.prof")
	for _, p := range []string{cpu, mem} {
		if err := os.WriteFile(p, []byte("an earlier profile"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{"-task", "files", "-data", filepath.Join(dir, "none"), "-steps", "2", "-cpuprofile", cpu, "-memprofile", mem,
		"-out", filepath.Join(dir, "runs", "a", "out")}
	var out, errb bytes.Buffer
	err := run(context.Background(), dist.Alone(), args, &out, &errb)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "none", "train.de")) {
		t.Fatalf("training on missing data: %v", err)
	}
	for _, p := range []string{cpu, mem} {
		if b, _ := os.ReadFile(p); string(b) != "an earlier profile" {
			t.Errorf("the refused run replaced %s", p)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "runs")); err == nil {
		t.Errorf("the refused run left %s", filepath.Join(dir, "runs"))
	}
	if err := run(context.Background(), dist.Alone(), []string{"-steps", "1", "-cpuprofile", filepath.Join(dir, "none", "cpu.prof"),
		"-out", filepath.Join(dir, "new")}, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "-cpuprofile: open") {
		t.Errorf("-cpuprofile in a missing directory: %v", err)
	}
}

// TestSyntheticTaskMemoryIsChecked asks for more examples than a memory
// limit holds: refused, naming the flags, before any work.
func TestSyntheticTaskMemoryIsChecked(t *testing.T) {
	s := settings{Task: "copy", TrainSize: 26000000, HeldOut: 256, MaxLen: 10}
	limit := sysmem.Limit{Bytes: 4 << 30, Source: "ulimit -v"}
	err := s.taskFits(limit)
	if err == nil || !strings.Contains(err.Error(), "-train-size 26000000 and -held-out 256: 26000256 examples of up to 10 symbols (-max-len) take up to 5.0 GB, more than the 1/4 of 4.0 GB") {
		t.Errorf("26 million examples in 4 GB: %v", err)
	}
	s.TrainSize = 20000
	if err := s.taskFits(limit); err != nil {
		t.Errorf("the default 20,000 examples: %v", err)
	}
}

// TestResumeRefusesAPipe names a FIFO as a resumed run's training data:
// refused naming the field, where opening it would wait for ever.
func TestResumeRefusesAPipe(t *testing.T) {
	files := writeCorpus(t)
	fifo := filepath.Join(t.TempDir(), "train.de")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	s := settings{TrainSrc: fifo, TrainTgt: files[1], ValidSrc: files[2], ValidTgt: files[3]}
	if err := s.checkInputs(); err == nil || !strings.Contains(err.Error(), "field train_src: "+fifo+" is not a regular file") {
		t.Errorf("a FIFO as train_src: %v", err)
	}
}
