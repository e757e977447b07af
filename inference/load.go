// Package inference serves a finished run: Load reads a run directory (its
// checkpoint, rebuilt as a model, and its tokenizer, checked against the
// fingerprints the checkpoint records) in one call, and the Run it returns
// translates sentences, continues prompts and tags text.
package inference

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/pkg/errors"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/data"
	"github.com/transformer-go/transformer/data/sentencepiece"
	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/layers"
	"github.com/transformer-go/transformer/model"
	"github.com/transformer-go/transformer/model/checkpoint"
	"github.com/transformer-go/transformer/trainer/rundir"
)

// Run is a trained model loaded from a run directory by Load, ready to
// translate, continue or tag text.
type Run struct {
	Model  model.Model
	Params *graph.Params
	// Tokenizer is the run's tokenizer: its BPE and vocabulary (bpe.txt,
	// vocab.txt, a data.BPETokenizer) or its SentencePiece model
	// (spm.model, a *sentencepiece.Tokenizer); nil for a run on a
	// synthetic task, whose ids are its symbols (its checkpoint records
	// no tokenizer).
	Tokenizer data.Tokenizer
	// Path is the weights file loaded.
	Path string
	// LongestSource is the most tokens of a source the model trained on,
	// its EOS included (of a sentence, for a language model of text), as
	// its checkpoint records it (data.LongestSourceKey); 0 where it does
	// not. A longer source is likely translated poorly.
	LongestSource int
	// Runtime is where and how Translate, Continue and Tag run the model,
	// and the memory limit their batches are checked against before any
	// work (nil: graph.CPU(), the CPU in float32, limited to what the
	// operating system gives this process).
	Runtime *graph.Runtime
}

// Option sets how Load loads a run.
type Option func(*options)

// options are what Options set.
type options struct {
	reg *layers.Registry
}

// WithRegistry makes Load build the model's variants from reg (see
// model.FromConfig): how a run of a variant of one's own is loaded.
func WithRegistry(reg *layers.Registry) Option {
	return func(o *options) { o.reg = reg }
}

// Load loads the model of the run directory dir in one call: its config
// and weights from the checkpoint which: "best", "final" or "averaged"
// (that file of dir, rundir.Best, Final, Averaged) or a path (a relative
// one is in dir), rebuilt in float32 with the built-in variants (or those
// of a registry given WithRegistry), and its tokenizer, checked against
// the fingerprints the checkpoint records. A checkpoint that records a tokenizer (a run on
// text) is refused without its files (bpe.txt and vocab.txt, or spm.model);
// one that records none, of a synthetic task, loads without a Tokenizer.
func Load(dir, which string, opts ...Option) (*Run, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		if err == nil {
			err = errors.New("not a directory")
		}
		return nil, errors.Wrapf(err, "run directory %s", dir)
	}
	path := which
	named, isNamed := namedWeights[which]
	if isNamed {
		path = filepath.Join(dir, named.file)
	} else if !filepath.IsAbs(which) {
		path = filepath.Join(dir, which)
	}
	if _, err := os.Stat(path); isNamed && os.IsNotExist(err) {
		return nil, errors.Errorf("%s has no %s: %s", dir, named.file, named.missing)
	}
	ck, err := checkpoint.Read(path)
	if err != nil {
		return nil, err
	}
	m, params, err := ck.Model(tensor.Float32, o.reg)
	if err != nil {
		return nil, err
	}
	tok, err := runTokenizer(ck, dir, m.Config().Vocab)
	if err != nil {
		return nil, err
	}
	longest, _ := strconv.Atoi(ck.Meta[data.LongestSourceKey])
	return &Run{Model: m, Params: params, Tokenizer: tok, Path: path, LongestSource: max(longest, 0)}, nil
}

// namedWeights are the weights Load takes by name: each one's file in a
// run directory, and why a run may lack it.
var namedWeights = map[string]struct{ file, missing string }{
	"best":     {rundir.Best, "the run has not evaluated yet"},
	"final":    {rundir.Final, "the run has not finished (resume it, or load its best weights)"},
	"averaged": {rundir.Averaged, "the run averaged no checkpoints (cmd/train writes it with -average N, 5 by default, at the end of a run)"},
}

// runTokenizer reads the tokenizer of the run directory dir, checked
// against the checkpoint ck, whose model has vocab tokens: a SentencePiece
// model (spm.model) where the run has one or ck records one, else BPE
// merges and a vocabulary (bpe.txt, vocab.txt); nil for a synthetic
// task's run, without the files and without their fingerprints in ck.
func runTokenizer(ck *checkpoint.File, dir string, vocab int) (data.Tokenizer, error) {
	spmPath := filepath.Join(dir, rundir.SentencePiece)
	_, recordsSPM := ck.Meta[sentencepiece.FingerprintKey]
	var tok data.Tokenizer
	var err error
	if _, statErr := os.Stat(spmPath); recordsSPM || statErr == nil {
		tok, err = spmTokenizer(ck, spmPath, statErr)
	} else {
		tok, err = bpeTokenizer(ck, dir)
	}
	if err != nil || tok == nil {
		return nil, err
	}
	if err := checkFingerprints(ck.Meta, ck.Path, dir, tok.Fingerprints()); err != nil {
		return nil, err
	}
	if tok.Len() != vocab {
		return nil, errors.Errorf("the tokenizer of %s holds %d tokens but the model of %s has %d", dir, tok.Len(), ck.Path, vocab)
	}
	return tok, nil
}

// spmTokenizer reads the SentencePiece model at path, of the run of the
// checkpoint ck; statErr is what statting path gave.
func spmTokenizer(ck *checkpoint.File, path string, statErr error) (data.Tokenizer, error) {
	if os.IsNotExist(statErr) {
		return nil, errors.Errorf("%s was trained on text, with the SentencePiece model its metadata records, but %s is missing (a run trained from Go writes it when trainer.Data.Tokenizer is given)",
			ck.Path, path)
	}
	return sentencepiece.LoadTokenizer(path)
}

// bpeTokenizer reads the BPE merges and vocabulary of the run directory
// dir, of the checkpoint ck: nil for a synthetic task's run.
func bpeTokenizer(ck *checkpoint.File, dir string) (data.Tokenizer, error) {
	bpePath, vocabPath := filepath.Join(dir, rundir.BPE), filepath.Join(dir, rundir.Vocab)
	_, recordsBPE := ck.Meta[data.BPEFingerprintKey]
	_, recordsVocab := ck.Meta[data.VocabFingerprintKey]
	var missing []string
	for _, p := range []string{bpePath, vocabPath} {
		if _, err := os.Stat(p); os.IsNotExist(err) {
			missing = append(missing, p)
		}
	}
	switch {
	case len(missing) == 2 && !recordsBPE && !recordsVocab:
		return nil, nil // a synthetic task's run
	case len(missing) > 0 && (recordsBPE || recordsVocab):
		return nil, errors.Errorf("%s was trained on text, with the tokenizer its metadata records, but %s is missing (a run trained from Go writes it when trainer.Data.Tokenizer is given)",
			ck.Path, strings.Join(missing, " and "))
	case len(missing) > 0:
		return nil, errors.Errorf("%s is missing: a run's tokenizer is %s and %s together", missing[0], rundir.BPE, rundir.Vocab)
	}
	bpe, err := data.ReadBPEFile(bpePath)
	if err != nil {
		return nil, err
	}
	v, err := data.ReadVocabFile(vocabPath)
	if err != nil {
		return nil, err
	}
	return data.BPETokenizer{BPE: bpe, Vocab: v}, nil
}

// checkFingerprints refuses a tokenizer file of dir that is not the one
// the checkpoint at path (metadata meta) was trained with (edited, emptied
// or reordered since), and a checkpoint that records no fingerprint of
// one, whose tokenizer cannot be checked; have are the fingerprints of the
// files read (data.Tokenizer.Fingerprints).
func checkFingerprints(meta map[string]string, path, dir string, have map[string]string) error {
	files := map[string]string{data.BPEFingerprintKey: rundir.BPE, data.VocabFingerprintKey: rundir.Vocab,
		sentencepiece.FingerprintKey: rundir.SentencePiece}
	for _, key := range slices.Sorted(maps.Keys(have)) {
		file := filepath.Join(dir, files[key])
		want, ok := meta[key]
		if !ok {
			return errors.Errorf("%s records no %s (the fingerprint of the %s it was trained with), so %s cannot be checked against it",
				path, key, files[key], file)
		}
		if want != have[key] {
			return errors.Errorf("%s is not the file the model was trained with (its SHA-256 differs from the checkpoint's)", file)
		}
	}
	return nil
}
