package trainer_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/data"
	"github.com/transformer-go/transformer/data/sentencepiece"
	"github.com/transformer-go/transformer/inference"
	"github.com/transformer-go/transformer/model/decode"
	"github.com/transformer-go/transformer/trainer"
)

// TestTrainerSavesItsTokenizer trains from Go with Data.Tokenizer and
// nothing else: the run directory gets bpe.txt and vocab.txt, inference.Load
// loads them checked against the checkpoint, and a relative checkpoint
// name is found in the run directory, not the working directory.
func TestTrainerSavesItsTokenizer(t *testing.T) {
	dir := t.TempDir()
	m, params, d := numbersRun()
	tr, err := trainer.New(m, params, d, trainer.Options{Steps: 2, OutDir: dir}, trainer.Quiet)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	r, err := inference.Load(dir, "final.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	if r.Tokenizer == nil || r.Path != filepath.Join(dir, "final.safetensors") {
		t.Fatalf("loaded %+v", r)
	}
	if got := r.Tokenizer.Encode("drei eins"); len(got) == 0 {
		t.Errorf("the loaded tokenizer encodes %q as %v", "drei eins", got)
	}
	if _, err := r.Translate([]string{"drei", ""}, decode.DefaultSearch()); err == nil || !strings.Contains(err.Error(), "sentence 2 is empty") {
		t.Errorf("an empty sentence: %v, want an error naming sentence 2", err)
	}

	// Another tokenizer is refused in the same directory, before anything
	// is written.
	bpe, _ := os.ReadFile(filepath.Join(dir, "bpe.txt"))
	m, params, d = numbersRun()
	tok := d.Tokenizer.(data.BPETokenizer)
	if tok.BPE, err = data.NewBPE(tok.BPE.Merges()[:10]); err != nil {
		t.Fatal(err)
	}
	d.Tokenizer = tok
	if _, err := trainer.New(m, params, d, trainer.Options{Steps: 4, OutDir: dir}, trainer.Quiet); err == nil || !strings.Contains(err.Error(), "bpe.txt is not Data.Tokenizer's") {
		t.Errorf("another tokenizer in the run directory: %v", err)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "bpe.txt")); string(after) != string(bpe) {
		t.Error("a refused run changed bpe.txt")
	}
}

// TestTrainerSavesItsSentencePieceModel trains on a SentencePiece
// model's tokenizer: the run directory gets the model file as it was
// (spm.model), inference.Load loads it checked against the checkpoint,
// and a run on another model is refused in that directory.
func TestTrainerSavesItsSentencePieceModel(t *testing.T) {
	const path = "../data/sentencepiece/testdata/bpe.model"
	tok, err := sentencepiece.LoadTokenizer(path)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	m, params, d := numbersModel(tok, numbers(600, 1))
	tr, err := trainer.New(m, params, d, trainer.Options{Steps: 2, OutDir: dir}, trainer.Quiet)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(path)
	if got, err := os.ReadFile(filepath.Join(dir, "spm.model")); err != nil || string(got) != string(want) {
		t.Fatalf("spm.model holds %d bytes (%v), want the %d of %s", len(got), err, len(want), path)
	}
	for _, name := range []string{"bpe.txt", "vocab.txt"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Errorf("a run on a SentencePiece model wrote %s", name)
		}
	}
	r, err := inference.Load(dir, "final")
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := r.Tokenizer.(*sentencepiece.Tokenizer); !ok || got.Model().Fingerprint() != tok.Model().Fingerprint() {
		t.Fatalf("the loaded tokenizer is %T, want the run's SentencePiece model", r.Tokenizer)
	}

	other, err := sentencepiece.LoadTokenizer("../data/sentencepiece/testdata/unigram.model")
	if err != nil {
		t.Fatal(err)
	}
	m, params, d = numbersModel(other, numbers(600, 1))
	if _, err := trainer.New(m, params, d, trainer.Options{Steps: 4, OutDir: dir}, trainer.Quiet); err == nil || !strings.Contains(err.Error(), "spm.model is not Data.Tokenizer's") {
		t.Errorf("another SentencePiece model in the run directory: %v", err)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "spm.model")); string(after) != string(want) {
		t.Error("a refused run changed spm.model")
	}
}

// ownTokenizer is a tokenizer of one's own, which a run directory cannot
// hold.
type ownTokenizer struct{ data.BPETokenizer }

// TestTrainerRefusesATokenizerItCannotSave: New takes a pointer to a
// data.BPETokenizer as the value, and refuses a tokenizer of one's own,
// naming its type, before it writes anything.
func TestTrainerRefusesATokenizerItCannotSave(t *testing.T) {
	m, params, d := numbersRun()
	tok := d.Tokenizer.(data.BPETokenizer)
	d.Tokenizer = &tok
	dir := t.TempDir()
	if _, err := trainer.New(m, params, d, trainer.Options{Steps: 2, OutDir: dir}, trainer.Quiet); err != nil {
		t.Fatalf("a *data.BPETokenizer: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "bpe.txt")); err != nil {
		t.Errorf("a *data.BPETokenizer's run has no bpe.txt: %v", err)
	}
	d.Tokenizer = ownTokenizer{tok}
	out := filepath.Join(t.TempDir(), "out")
	if _, err := trainer.New(m, params, d, trainer.Options{Steps: 2, OutDir: out}, trainer.Quiet); err == nil || !strings.Contains(err.Error(), "Data.Tokenizer is a trainer_test.ownTokenizer") {
		t.Errorf("a tokenizer of one's own: %v, want an error naming its type", err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("the refused run made %s", out)
	}
}

// TestMostSalientSkipsEOS: the saliency map has a row for EOSID, which the
// Example's helper must not pick as a source token.
func TestMostSalientSkipsEOS(t *testing.T) {
	grad := tensor.New(tensor.WithShape(3, 2), tensor.WithBacking([]float64{1, 0, 0, 2, 0, 9}))
	if i := mostSalient(grad, 2); i != 1 {
		t.Errorf("most salient of 2 tokens and EOS (the largest row): %d, want 1", i)
	}
}
