package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/transformer-go/transformer/inference"
	"github.com/transformer-go/transformer/trainer/dist"
)

// spmModel is a small SentencePiece model (bpe, 600 pieces).
const spmModel = "../../data/sentencepiece/testdata/bpe.model"

// TestSentencePieceRun trains with -spm: the run directory keeps the model
// as spm.model (and no bpe.txt or vocab.txt), run.json records its path
// and no merges, inference.Load loads it with the final, best and averaged
// weights, and -resume reads the run's own spm.model, not the file -spm
// named.
func TestSentencePieceRun(t *testing.T) {
	files := writeCorpus(t)
	dir := filepath.Join(t.TempDir(), "run")
	spm := filepath.Join(t.TempDir(), "m.model")
	want, err := os.ReadFile(spmModel)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(spm, want, 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-task", "files", "-train-src", files[0], "-train-tgt", files[1], "-valid-src", files[2], "-valid-tgt", files[3],
		"-spm", spm, "-steps", "2", "-eval-every", "1", "-save-every", "1", "-average", "2", "-max-tokens", "256", "-out", dir}
	var out, errb bytes.Buffer
	if err := run(context.Background(), dist.Alone(), args, &out, &errb); err != nil {
		t.Fatal(err, errb.String())
	}
	if got, err := os.ReadFile(filepath.Join(dir, "spm.model")); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("spm.model: %d bytes (%v), want the %d of -spm", len(got), err, len(want))
	}
	for _, name := range []string{"bpe.txt", "vocab.txt"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Errorf("a run with -spm wrote %s", name)
		}
	}
	var saved map[string]any
	js, _ := os.ReadFile(filepath.Join(dir, "run.json"))
	if err := json.Unmarshal(js, &saved); err != nil {
		t.Fatal(err)
	}
	if _, merges := saved["bpe_merges"]; saved["spm_file"] != spm || merges {
		t.Errorf("run.json records spm_file %v and bpe_merges %v, want %s and none", saved["spm_file"], saved["bpe_merges"], spm)
	}
	for _, which := range []string{"final", "best", "averaged"} {
		r, err := inference.Load(dir, which)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Tokenizer.Encode("ein Hund")) == 0 || r.Model.Config().Vocab != r.Tokenizer.Len() {
			t.Errorf("%s: the run's tokenizer holds %d tokens, its model %d", which, r.Tokenizer.Len(), r.Model.Config().Vocab)
		}
	}

	os.WriteFile(spm, []byte("no longer a model"), 0o644)
	if err := run(context.Background(), dist.Alone(), []string{"-resume", dir, "-steps", "3"}, &out, &errb); err != nil {
		t.Fatalf("resuming after -spm's file changed: %v\n%s", err, errb.String())
	}
	os.WriteFile(filepath.Join(dir, "spm.model"), []byte("no longer a model"), 0o644)
	if err := run(context.Background(), dist.Alone(), []string{"-resume", dir, "-steps", "4"}, &out, &errb); err == nil ||
		!strings.Contains(err.Error(), "the run's SentencePiece model") {
		t.Errorf("resuming with a broken spm.model: %v, want an error naming it", err)
	}
}

// TestSentencePieceFlagsRefused gives -spm what it cannot take: each is
// refused naming the flag, and nothing is made.
func TestSentencePieceFlagsRefused(t *testing.T) {
	files := writeCorpus(t)
	onFiles := []string{"-task", "files", "-train-src", files[0], "-train-tgt", files[1], "-valid-src", files[2], "-valid-tgt", files[3], "-steps", "2"}
	missing := filepath.Join(t.TempDir(), "missing.model")
	tests := []struct {
		args []string
		want string
	}{
		{append(onFiles, "-spm", spmModel, "-bpe-merges", "10"), "-bpe-merges has no effect with -spm"},
		{append(onFiles, "-spm", spmModel, "-bpe", files[0]), "-spm and -bpe are two tokenizers"},
		{append(onFiles, "-spm", missing), "-spm: stat " + missing + ": no such file"},
		{append(onFiles, "-spm", files[0]), "-spm: " + files[0] + ": not a SentencePiece model"},
		{[]string{"-spm", spmModel}, "-spm has no effect with -task copy"},
	}
	for _, tc := range tests {
		refused(t, tc.args, tc.want)
	}
}
