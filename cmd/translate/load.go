package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/pkg/errors"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/cmd/internal/srcflags"
	"github.com/transformer-go/transformer/data"
	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/model"
)

// translator is a trained model with its tokenizer.
type translator struct {
	m      model.Model
	params *graph.Params
	tok    data.Tokenizer
}

// load reads the checkpoint (best, final, averaged or a file) and the
// tokenizer of the training output directory dir.
func load(dir, checkpoint string) (*translator, error) {
	path := checkpoint
	switch checkpoint {
	case "best", "final", "averaged":
		path = filepath.Join(dir, checkpoint+".safetensors")
	}
	ck, err := model.LoadCheckpoint(path)
	if err != nil {
		return nil, errors.Wrap(err, "-checkpoint")
	}
	m, params, err := ck.Model(tensor.Float32, nil)
	if err != nil {
		return nil, err
	}
	if !model.Generates(m) && !m.Layout().Aligned {
		return nil, errors.Errorf("%s holds a model of kind %s, which neither generates nor tags", path, m.Config().Kind)
	}
	bpe, err := data.ReadBPEFile(filepath.Join(dir, "bpe.txt"))
	if err != nil {
		return nil, errors.Wrap(err, "-model needs the output directory of a run on files")
	}
	vocab, err := data.ReadVocabFile(filepath.Join(dir, "vocab.txt"))
	if err != nil {
		return nil, err
	}
	if err := checkFingerprints(ck.Meta, dir, bpe, vocab); err != nil {
		return nil, err
	}
	if vocab.Len() != m.Config().Vocab {
		return nil, errors.Errorf("%s holds %d tokens but the model of %s has %d",
			filepath.Join(dir, "vocab.txt"), vocab.Len(), path, m.Config().Vocab)
	}
	return &translator{m: m, params: params, tok: data.Tokenizer{BPE: bpe, Vocab: vocab}}, nil
}

// checkFingerprints refuses a bpe.txt or vocab.txt that is not the one
// the checkpoint was trained with (edited, emptied or reordered since),
// when the checkpoint records their fingerprints.
func checkFingerprints(meta map[string]string, dir string, bpe *data.BPE, vocab *data.Vocab) error {
	for _, f := range []struct{ key, file, have string }{
		{data.BPEFingerprintKey, "bpe.txt", bpe.Fingerprint()},
		{data.VocabFingerprintKey, "vocab.txt", vocab.Fingerprint()},
	} {
		if want, ok := meta[f.key]; ok && want != f.have {
			return errors.Errorf("%s is not the file the model was trained with (its SHA-256 differs from the checkpoint's)", filepath.Join(dir, f.file))
		}
	}
	return nil
}

// lines are the lines of a file, or of standard input, and its name for
// messages.
type lines struct {
	name string
	text []string
}

// where locates line i (from 0) for a message: "NAME:LINE".
func (l lines) where(i int) string { return fmt.Sprintf("%s:%d", l.name, i+1) }

// readInput reads the lines of path (plain or gzip-compressed), or of stdin
// if path is empty.
func readInput(path string, stdin io.Reader) (lines, error) {
	var lr *data.LineReader
	var err error
	if path == "" {
		lr, err = data.NewLineReader("standard input", stdin)
	} else {
		lr, err = data.OpenLines(path)
	}
	if err != nil {
		return lines{}, err
	}
	defer lr.Close()
	l := lines{name: lr.Name()}
	for {
		s, ok, err := lr.Next()
		if err != nil || !ok {
			return l, err
		}
		l.text = append(l.text, s)
	}
}

// encode tokenizes line i of l, with EOSID appended (and BOSID prepended for
// a target; a prompt gets neither), within the bounds of b: a source (or a
// prompt with the BOSID the model reads before it) may be truncated, a
// target may not.
func (t *translator) encode(l lines, i int, kind text, b srcflags.Bound) ([]int, error) {
	ids := t.tok.Encode(l.text[i])
	if kind == targetText {
		if err := b.Target(l.where(i), len(ids)+2); err != nil {
			return nil, err
		}
		return append(append([]int{data.BOSID}, ids...), data.EOSID), nil
	}
	keep, err := b.Source(l.where(i), len(ids)+1) // EOSID; a prompt's BOSID
	if err != nil {
		return nil, err
	}
	ids = ids[:keep-1]
	if kind == promptText {
		return ids, nil
	}
	return append(ids, data.EOSID), nil
}

// text is what a line is to encode.
type text int

const (
	sourceText text = iota // a sentence to translate: ids EOS
	targetText             // a translation to score: BOS ids EOS
	promptText             // a prompt to continue: ids
)

// sources tokenizes the input lines as sources, or as prompts.
func (t *translator) sources(in lines, prompts bool, b srcflags.Bound) ([][]int, error) {
	kind := sourceText
	if prompts {
		kind = promptText
	}
	srcs := make([][]int, len(in.text))
	for i := range srcs {
		var err error
		if srcs[i], err = t.encode(in, i, kind, b); err != nil {
			return nil, err
		}
	}
	return srcs, nil
}
