// Command score prints, for each source-target pair of token ids, the model's
// teacher-forced log-probability of the target:
//
//	Σ_{t≥1} log p(tgt[t] | tgt[<t], src)
//
// Usage:
//
//	score -checkpoint FILE [-from torch -heads H] -src SRC -tgt TGT [-batch N]
//
// SRC and TGT hold one sequence per line, ids separated by white space; line i
// of TGT is the target of line i of SRC and starts with the start token. Id 0
// is padding and may not appear. The files may be gzip-compressed; a line is
// at most 1 MiB and a sequence at most the model's max_len ids, or the line
// is an error naming it. The checkpoint is one written by cmd/train (of an
// encoder-decoder, or of a decoder-only model, which reads the source as
// its prompt), or with -from torch a PyTorch model's weights in safetensors (see
// model.ImportTorch), whose sizes come from the tensor shapes.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/pkg/errors"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/data"
	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/model"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "score:", err)
		}
		os.Exit(2)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("score", flag.ContinueOnError)
	fs.SetOutput(stderr)
	ckpt := fs.String("checkpoint", "", "model weights (safetensors)")
	from := fs.String("from", "", `"torch" for PyTorch weights (see the package doc)`)
	heads := fs.Int("heads", 0, "attention heads, with -from torch")
	srcPath := fs.String("src", "", "source token ids, one sequence per line")
	tgtPath := fs.String("tgt", "", "target token ids, one sequence per line, each starting with the start token")
	batch := fs.Int("batch", 32, "pairs per batch")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case *ckpt == "" || *srcPath == "" || *tgtPath == "":
		return errors.New("-checkpoint, -src and -tgt are required")
	case *from != "" && *from != "torch":
		return errors.Errorf("-from %q: the only other format is torch", *from)
	case *from == "torch" && *heads <= 0:
		return errors.New("-from torch needs -heads")
	case *batch <= 0:
		return errors.New("-batch must be positive")
	}
	m, params, err := load(*ckpt, *from, *heads)
	if err != nil {
		return err
	}
	src, err := readIDs(*srcPath, m.Config().Vocab, m.Config().MaxLen, false)
	if err != nil {
		return err
	}
	tgt, err := readIDs(*tgtPath, m.Config().Vocab, m.Config().MaxLen, true)
	if err != nil {
		return err
	}
	if len(src) != len(tgt) {
		return errors.Errorf("%s has %d lines but %s has %d", *srcPath, len(src), *tgtPath, len(tgt))
	}
	scores, err := model.ScorePairs(m, params, src, tgt, *batch)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(stdout)
	for _, s := range scores {
		fmt.Fprintf(w, "%.6f\n", s)
	}
	return w.Flush()
}

// load reads the model, of any kind that generates, and its weights.
func load(path, from string, heads int) (model.Model, *graph.Params, error) {
	if from != "torch" {
		m, params, err := model.Load(path, tensor.Float32, nil)
		if err == nil && !model.Generates(m) {
			err = errors.Errorf("%s holds a model of kind %s, which scores no targets", path, m.Config().Kind)
		}
		return m, params, err
	}
	cfg, params, err := model.ImportTorch(path, heads, tensor.Float32)
	if err != nil {
		return nil, nil, err
	}
	m, err := model.New(cfg)
	return m, params, err
}

// readIDs reads one sequence of ids in [1, vocab) per line (plain or
// gzip-compressed), each at most maxLen ids long; with target, each must
// start with the start token.
func readIDs(path string, vocab, maxLen int, target bool) ([][]int, error) {
	var seqs [][]int
	err := data.ReadLines(path, func(line string, n int) error {
		seq, err := parseIDs(line, vocab)
		switch {
		case err != nil:
			return errors.Wrapf(err, "%s:%d", path, n)
		case len(seq) > maxLen:
			return errors.Errorf("%s:%d: %d ids, more than the model's max_len %d", path, n, len(seq), maxLen)
		case target && (seq[0] != data.BOSID || len(seq) < 2):
			return errors.Errorf("%s:%d: a target starts with the start token %d and has a token after it", path, n, data.BOSID)
		}
		seqs = append(seqs, seq)
		return nil
	})
	return seqs, err
}

// parseIDs parses a line of ids in [1, vocab) separated by white space.
func parseIDs(line string, vocab int) ([]int, error) {
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return nil, errors.New("empty line")
	}
	seq := make([]int, len(fields))
	for i, fld := range fields {
		id, err := strconv.Atoi(fld)
		if err != nil || id <= 0 || id >= vocab {
			return nil, errors.Errorf("token %d is %q, want an id in [1, %d)", i+1, fld, vocab)
		}
		seq[i] = id
	}
	return seq, nil
}
