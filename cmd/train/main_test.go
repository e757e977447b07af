package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/transformer-go/transformer/trainer"
)

// TestBinaryStarts builds the command and runs it: an old dependency
// (go4.org/unsafe/assume-no-moving-gc) once made every binary panic at start.
func TestBinaryStarts(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "train")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	tests := []struct {
		preset, want string
	}{
		{"base", "parameters: 63082496"},
		{"big", "parameters: 214245376"},
	}
	for _, tc := range tests {
		out, err := exec.Command(bin, "-preset", tc.preset, "-vocab-size", "37000", "-summary").CombinedOutput()
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if last := lines[len(lines)-1]; last != tc.want {
			t.Errorf("-preset %s: last line %q, want %q", tc.preset, last, tc.want)
		}
	}
}

func TestBadFlags(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-steps", "5", "-epochs", "2"}, "not both"},
		{[]string{"-task", "files"}, "-data DIR"},
		{[]string{"-task", "shuffle"}, "copy"},
		{[]string{"-task", "files", "-data", "d", "-train-src", "x"}, "not both"},
		{[]string{"-resume", "nowhere", "-dropout", "0.2"}, "only -steps"},
		{[]string{"-resume", filepath.Join(t.TempDir(), "none")}, "not a training output directory"},
		{[]string{"-preset", "huge", "-summary"}, "base, big, small, tiny"},
		{[]string{"-symbols", "0"}, "-task"},
		{[]string{"stray"}, "unexpected arguments"},
	}
	for _, tc := range tests {
		var out, errb bytes.Buffer
		err := run(context.Background(), tc.args, &out, &errb)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one mentioning %q", tc.args, err, tc.want)
		}
	}
}

func TestTrainAndResume(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	args := []string{"-steps", "4", "-max-tokens", "128", "-train-size", "200", "-held-out", "16", "-out", dir, "-eval-every", "2"}
	var out, errb bytes.Buffer
	if err := run(context.Background(), args, &out, &errb); err != nil {
		t.Fatal(err, errb.String())
	}
	cpu, mem := filepath.Join(t.TempDir(), "cpu.pprof"), filepath.Join(t.TempDir(), "mem.pprof")
	resume := []string{"-resume", dir, "-steps", "6", "-cpuprofile", cpu, "-memprofile", mem}
	if err := run(context.Background(), resume, &out, &errb); err != nil {
		t.Fatal(err, errb.String())
	}
	for _, p := range []string{cpu, mem} {
		if fi, err := os.Stat(p); err != nil || fi.Size() == 0 {
			t.Errorf("profile %s: %v", p, err)
		}
	}
	ms, err := trainer.ReadMetrics(filepath.Join(dir, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 3 || ms[2].Step != 6 || ms[2].ExactMatch == nil {
		t.Fatalf("metrics %+v", ms)
	}
	log := errb.String()
	for _, want := range []string{"resumed", "step=4", "exact_match", "activation_memory_mb", "done"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
}

// multi30k is the shared data directory, beside the project.
const multi30k = "../../../shared/data/multi30k"

// TestMulti30kShortRun trains briefly on real German–English data and checks
// that the validation loss falls well below where it started.
func TestMulti30kShortRun(t *testing.T) {
	if _, err := os.Stat(multi30k); err != nil {
		msg := "Multi30k not found at " + multi30k + " (see ../shared/README.md)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	if testing.Short() {
		t.Skip("a few minutes of training; skipped with -short")
	}
	dir := filepath.Join(t.TempDir(), "run")
	args := []string{"-task", "files", "-data", multi30k, "-preset", "tiny", "-bpe-merges", "4000",
		"-steps", "240", "-max-tokens", "1024", "-warmup", "200", "-eval-every", "40", "-bleu-every", "100", "-out", dir}
	var out, errb bytes.Buffer
	if err := run(context.Background(), args, &out, &errb); err != nil {
		t.Fatal(err, errb.String())
	}
	ms, err := trainer.ReadMetrics(filepath.Join(dir, "metrics.jsonl"))
	if err != nil || len(ms) != 6 {
		t.Fatalf("metrics %+v, %v", ms, err)
	}
	first, last := ms[0], ms[len(ms)-1]
	t.Logf("validation loss %.3f (ppl %.1f) at step %d → %.3f (ppl %.1f) at step %d, %.0f tokens/s",
		first.ValLoss, first.ValPPL, first.Step, last.ValLoss, last.ValPPL, last.Step, last.TokensPerS)
	if last.BLEU == nil {
		t.Error("no BLEU at the last evaluation")
	}
	if !(last.ValLoss < first.ValLoss-1) {
		t.Fatalf("validation loss fell from %.3f to %.3f only", first.ValLoss, last.ValLoss)
	}
}
