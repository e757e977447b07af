package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/data"
	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/model"
	"github.com/transformer-go/transformer/trainer"
	"github.com/transformer-go/transformer/trainer/rundir"
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
	r, err := trainer.LoadRun(dir, checkpoint)
	if err != nil {
		return nil, errors.Wrap(err, "-model, -checkpoint")
	}
	if !model.Generates(r.Model) {
		return nil, errors.Errorf("%s holds a model of kind %s, which does not generate", r.Path, r.Model.Config().Kind)
	}
	if r.Tokenizer == nil {
		return nil, errors.Errorf("-model needs the output directory of a run on files, with %s", filepath.Join(dir, rundir.BPE))
	}
	return &translator{m: r.Model, params: r.Params, tok: *r.Tokenizer}, nil
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
func (t *translator) encode(l lines, i int, kind text, b model.SourceBound) ([]int, error) {
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
func (t *translator) sources(in lines, prompts bool, b model.SourceBound) ([][]int, error) {
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
