package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/transformer-go/transformer/trainer/dist"
)

// TestEncoderOnlyRefusesUnalignedPairs trains an encoder-only tagger on
// files whose fourth lines differ in length (the second, empty, is
// skipped): the error names both files' line, and nothing is trained.
func TestEncoderOnlyRefusesUnalignedPairs(t *testing.T) {
	dir := t.TempDir()
	src := []string{"a b c", "", "b c a", "a b c d", "c a b"}
	tgt := []string{"a b c", "", "b c a", "a b", "c a b"}
	var paths []string
	for _, f := range []struct {
		name  string
		lines []string
	}{{"train.de", src}, {"train.en", tgt}, {"val.de", src[:3]}, {"val.en", tgt[:3]}} {
		p := filepath.Join(dir, f.name)
		if err := os.WriteFile(p, []byte(strings.Join(f.lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	out := filepath.Join(t.TempDir(), "run")
	args := []string{"-task", "files", "-model", "encoder-only", "-train-src", paths[0], "-train-tgt", paths[1],
		"-valid-src", paths[2], "-valid-tgt", paths[3], "-bpe-merges", "5", "-steps", "2", "-max-tokens", "256", "-out", out}
	var stdout, errb bytes.Buffer
	err := run(context.Background(), dist.Alone(), args, &stdout, &errb)
	want := paths[0] + ":4 and " + paths[1] + ":4: a source of"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("unaligned pairs for an encoder-only model: %v, want an error naming %q", err, want)
	}
	if _, err := os.Stat(filepath.Join(out, "metrics.jsonl")); err == nil {
		t.Error("the refused run wrote metrics")
	}
}

// TestBPELearningStopsOnSignal: a run whose context is done (Ctrl-C)
// while it learns BPE stops with the error of learning, and leaves no run
// directory behind.
func TestBPELearningStopsOnSignal(t *testing.T) {
	files := writeCorpus(t)
	out := filepath.Join(t.TempDir(), "run")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	args := []string{"-task", "files", "-train-src", files[0], "-train-tgt", files[1], "-valid-src", files[2], "-valid-tgt", files[3],
		"-bpe-merges", "30", "-steps", "2", "-max-tokens", "256", "-out", out}
	var stdout, errb bytes.Buffer
	err := run(ctx, dist.Alone(), args, &stdout, &errb)
	if err == nil || !strings.Contains(err.Error(), "learning BPE, after 0 of 30 merges") {
		t.Fatalf("a run interrupted while learning BPE: %v", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("the interrupted run left %s behind: %v", out, err)
	}
}

// TestLastLineTriesTheRun: a finished run's last line is the command that
// tries it, which for a synthetic task gives cmd/translate token ids.
func TestLastLineTriesTheRun(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	var stdout, errb bytes.Buffer
	args := []string{"-steps", "2", "-train-size", "64", "-out", out}
	if err := run(context.Background(), dist.Alone(), args, &stdout, &errb); err != nil {
		t.Fatal(err, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(errb.String()), "\n")
	want := `try="echo 4 5 6 7 8 | go run github.com/transformer-go/transformer/cmd/translate -model ` + out + ` -method greedy"`
	if last := lines[len(lines)-1]; !strings.Contains(last, want) {
		t.Errorf("the last line %q does not say %s", last, want)
	}
	if got := translateCommand("./bin/train"); got != "./bin/translate" {
		t.Errorf("beside ./bin/train: %q", got)
	}
	if got := firstLines("val.de.gz"); got != "zcat val.de.gz | head -n 3" {
		t.Errorf("the first lines of a gzip file: %q", got)
	}
}
