package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"unicode/utf8"

	"github.com/pkg/errors"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/data"
	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/model"
)

// translator is a trained model with its tokenizer.
type translator struct {
	m      *model.Transformer
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
	m, params, err := ck.Transformer(tensor.Float32)
	if err != nil {
		return nil, err
	}
	bpe, err := data.ReadBPEFile(filepath.Join(dir, "bpe.txt"))
	if err != nil {
		return nil, errors.Wrap(err, "-model needs the output directory of a run on files")
	}
	vocab, err := data.ReadVocabFile(filepath.Join(dir, "vocab.txt"))
	if err != nil {
		return nil, err
	}
	if vocab.Len() != m.Config().Vocab {
		return nil, errors.Errorf("%s holds %d tokens but the model of %s has %d",
			filepath.Join(dir, "vocab.txt"), vocab.Len(), path, m.Config().Vocab)
	}
	return &translator{m: m, params: params, tok: data.Tokenizer{BPE: bpe, Vocab: vocab}}, nil
}

// lines are the lines of a file, or of standard input, and its name for
// messages.
type lines struct {
	name string
	text []string
}

// where locates line i (from 0) for a message: "NAME:LINE".
func (l lines) where(i int) string { return fmt.Sprintf("%s:%d", l.name, i+1) }

// readInput reads the lines of path, or of stdin if path is empty.
func readInput(path string, stdin io.Reader) (lines, error) {
	if path == "" {
		return readLines("standard input", stdin)
	}
	return readFile(path)
}

func readFile(path string) (lines, error) {
	f, err := os.Open(path)
	if err != nil {
		return lines{}, err
	}
	defer f.Close()
	return readLines(path, f)
}

// readLines reads r one line at a time; each line must be valid UTF-8.
func readLines(name string, r io.Reader) (lines, error) {
	l := lines{name: name}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<24)
	for sc.Scan() {
		if !utf8.Valid(sc.Bytes()) {
			return l, errors.Errorf("%s: not valid UTF-8", l.where(len(l.text)))
		}
		l.text = append(l.text, sc.Text())
	}
	return l, errors.Wrap(sc.Err(), name)
}

// encode tokenizes line i of l, with EOSID appended (and BOSID prepended for
// a target), checking that the model's positions can hold it.
func (t *translator) encode(l lines, i int, target bool) ([]int, error) {
	ids := append(t.tok.Encode(l.text[i]), data.EOSID)
	if target {
		ids = append([]int{data.BOSID}, ids...)
	}
	cfg := t.m.Config()
	if n := len(ids); cfg.Positions == "learned" && n > cfg.MaxLen {
		return nil, errors.Errorf("%s: %d tokens, more than the model's %d positions", l.where(i), n, cfg.MaxLen)
	}
	return ids, nil
}

// sources tokenizes the input lines.
func (t *translator) sources(in lines) ([][]int, error) {
	srcs := make([][]int, len(in.text))
	for i := range srcs {
		var err error
		if srcs[i], err = t.encode(in, i, false); err != nil {
			return nil, err
		}
	}
	return srcs, nil
}
