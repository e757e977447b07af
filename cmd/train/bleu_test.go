package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/transformer-go/transformer/trainer"
	"github.com/transformer-go/transformer/trainer/dist"
)

// writeCorpus writes a tiny parallel corpus and returns the paths of its
// training and validation sources and targets.
func writeCorpus(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	src := []string{"ein Hund läuft .", "eine Katze schläft .", "zwei Hunde spielen im Park .", "ein Mann liest ."}
	tgt := []string{"a dog runs .", "a cat sleeps .", "two dogs play in the park .", "a man reads ."}
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
	return paths
}

func TestBLEUDuringTraining(t *testing.T) {
	files := writeCorpus(t)
	dir := filepath.Join(t.TempDir(), "run")
	args := []string{"-task", "files", "-train-src", files[0], "-train-tgt", files[1], "-valid-src", files[2], "-valid-tgt", files[3],
		"-bpe-merges", "30", "-steps", "4", "-eval-every", "1", "-bleu-every", "2", "-bleu-sample", "2", "-keep-best", "bleu",
		"-max-tokens", "256", "-out", dir}
	var out, errb bytes.Buffer
	if err := run(context.Background(), dist.Alone(), args, &out, &errb); err != nil {
		t.Fatal(err, errb.String())
	}
	ms, err := trainer.ReadMetrics(filepath.Join(dir, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var steps []int
	for _, m := range ms {
		if m.BLEU != nil {
			steps = append(steps, m.Step)
		}
	}
	if len(steps) != 2 || steps[0] != 2 || steps[1] != 4 {
		t.Fatalf("BLEU at steps %v, want 2 and 4", steps)
	}
	if !strings.Contains(errb.String(), "bleu=") {
		t.Errorf("the log does not report BLEU:\n%s", errb.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "best.safetensors")); err != nil {
		t.Errorf("no best checkpoint by BLEU: %v", err)
	}
}

func TestBLEUFlags(t *testing.T) {
	files := []string{"-task", "files", "-data", "d"}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-keep-best", "bleu"}, "-task files"},
		{append(files, "-keep-best", "chrf"), "loss or bleu"},
		{append(files, "-keep-best", "bleu", "-bleu-every", "0"), "above 0"},
		{append(files, "-bleu-sample", "-1"), "negative"},
	}
	for _, tc := range tests {
		var out, errb bytes.Buffer
		err := run(context.Background(), dist.Alone(), append(tc.args, "-steps", "1"), &out, &errb)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one mentioning %q", tc.args, err, tc.want)
		}
	}
}
