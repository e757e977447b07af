// Command score prints, for each source-target pair of token ids, the model's
// teacher-forced log-probability of the target:
//
//	Σ_{t≥1} log p(tgt[t] | tgt[<t], src)
//
// Usage:
//
//	score -checkpoint FILE [-from torch -heads H] -src SRC -tgt TGT [-batch N]
//	      [-max-src-len N] [-long error|truncate]
//
// The files are read a batch (-batch pairs) at a time, and each batch's
// scores written, in input order, as soon as it is done: score works in
// bounded memory on files of any length.
//
// SRC and TGT hold one sequence per line, ids separated by white space; line i
// of TGT is the target of line i of SRC and starts with the start token. Id 0
// is padding and may not appear. The files may be gzip-compressed; a line is
// at most 1 MiB, or it is an error naming the line. A source of more ids
// than -max-src-len (by default the model's max_len, and at most 1,024 with
// sinusoidal positions) is an error naming its line, or with -long truncate
// is cut to that many ids (its final EOS kept) with a warning; a target of
// more ids than the model's max_len (with sinusoidal positions, than 1,024
// or -max-src-len) is always an error naming its line. Before any pair is
// read, the largest batch those bounds and -batch allow is checked: if its
// attention or log-probabilities would not fit in the memory the process
// may allocate, score refuses, printing nothing; else it prints every
// score. The
// checkpoint is one written by cmd/train (of an
// encoder-decoder, or of a decoder-only model, which reads the source as
// its prompt), or with -from torch a PyTorch model's weights in safetensors (see
// checkpoint.ImportTorch), whose sizes come from the tensor shapes.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/pkg/errors"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/cmd/internal/runtimeflag"
	"github.com/transformer-go/transformer/cmd/internal/srcflags"
	"github.com/transformer-go/transformer/data"
	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/internal/cliflag"
	"github.com/transformer-go/transformer/internal/sysmem"
	"github.com/transformer-go/transformer/model"
	"github.com/transformer-go/transformer/model/checkpoint"
	"github.com/transformer-go/transformer/model/decode"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil && !errors.Is(err, flag.ErrHelp) { // -h printed the usage: exit 0
		fmt.Fprintln(os.Stderr, "score:", err)
		os.Exit(2)
	}
}

// options are the command's flags.
type options struct {
	ckpt, from, srcPath, tgtPath string
	heads, batch                 int
	src                          srcflags.Flags
	runtime                      *runtimeflag.Flags
}

func newFlags(fs *flag.FlagSet) *options {
	o := &options{}
	o.runtime = runtimeflag.Register(fs)
	fs.StringVar(&o.ckpt, "checkpoint", "", "model weights (safetensors)")
	fs.StringVar(&o.from, "from", "", `"torch" for PyTorch weights (see the package doc)`)
	fs.IntVar(&o.heads, "heads", 0, "attention heads, with -from torch")
	fs.StringVar(&o.srcPath, "src", "", "source token ids, one sequence per line")
	fs.StringVar(&o.tgtPath, "tgt", "", "target token ids, one sequence per line, each starting with the start token")
	fs.IntVar(&o.batch, "batch", 32, "pairs per batch")
	o.src.Register(fs)
	return o
}

// check reports missing flags, bad values, stray arguments, and -heads
// without -from torch (a checkpoint of cmd/train records its heads).
func (o *options) check(fs *flag.FlagSet) error {
	switch {
	case fs.NArg() > 0:
		return errors.Errorf("unexpected arguments %q (flags start with -)", fs.Args())
	case o.from == "" && o.heads != 0:
		return errors.Errorf("-heads %d has no effect without -from torch: a checkpoint of cmd/train records its heads", o.heads)
	case o.ckpt == "" || o.srcPath == "" || o.tgtPath == "":
		return errors.New("-checkpoint, -src and -tgt are required")
	case o.from != "" && o.from != "torch":
		return errors.Errorf("-from %q: the only other format is torch", o.from)
	case o.from == "torch" && o.heads <= 0:
		return errors.New("-from torch needs -heads")
	case o.batch <= 0 || o.batch > srcflags.MaxBatch:
		return errors.Errorf("-batch %d: want 1 to %d (the files are read a batch at a time)", o.batch, srcflags.MaxBatch)
	}
	return o.src.Check()
}

// summaryLine says what the command does, atop -h.
const summaryLine = "score prints, for each pair of lines of token ids, the teacher-forced log-probability of the target given the source, with a checkpoint of cmd/train or PyTorch weights."

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("score", flag.ContinueOnError)
	o := newFlags(fs)
	if err := cliflag.Parse(fs, args, "score -checkpoint FILE -src SRC -tgt TGT [flags]", summaryLine, stdout); err != nil {
		return err
	}
	if err := o.check(fs); err != nil {
		return err
	}
	rt, err := o.runtime.Open(stderr)
	if err != nil {
		return err
	}
	// The files are opened before the model is loaded, so that a missing
	// one is found before that work.
	src, err := data.OpenLines(o.srcPath)
	if err != nil {
		return err
	}
	defer src.Close()
	tgt, err := data.OpenLines(o.tgtPath)
	if err != nil {
		return err
	}
	defer tgt.Close()
	m, params, err := load(o.ckpt, o.from, o.heads)
	if err != nil {
		return err
	}
	// Every batch is checked against the memory the process may allocate
	// before the first: what is left after it would count the first's
	// memory, which the next reuses, as taken.
	if l, ok := sysmem.Lowest(); ok {
		rt.LimitMemory(l)
	}
	return o.stream(rt, m, params, src, tgt, stdout, stderr)
}

// checkLargest refuses, before any pair is read, the largest batch the
// flags and the bound b let the model of c with elements of elemBytes
// bytes score, if it would not fit in the memory rt may allocate: score
// prints every score or none.
func (o *options) checkLargest(rt *graph.Runtime, m model.Model, elemBytes int, b srcflags.Bound) error {
	c := m.Config()
	tgtLen := b.MaxTgt
	if !m.Layout().Sources { // a decoder-only model reads the source before the target
		tgtLen = min(c.MaxLen, b.Max+b.MaxTgt)
	}
	what := fmt.Sprintf("scoring batches of %d pairs (-batch), sources of up to %d tokens (-max-src-len) and targets of up to %d",
		o.batch, b.Max, b.MaxTgt)
	if err := rt.CheckMemory(what, c.ForwardBytes(elemBytes, o.batch, b.Max, tgtLen)); err != nil {
		return errors.Errorf("%v; lower -batch, or -max-src-len", err)
	}
	return nil
}

// stream scores the pairs a batch at a time, writing each batch's scores,
// in input order, as soon as it is done: in memory bounded by the batch,
// however long the files. Warnings go to warn.
func (o *options) stream(rt *graph.Runtime, m model.Model, params *graph.Params, src, tgt *data.LineReader, stdout, warn io.Writer) error {
	c := m.Config()
	b, err := o.src.Bound(c, "score", warn)
	if err == nil {
		err = o.checkLargest(rt, m, int(params.Dtype().Size()), b)
	}
	if err != nil {
		return err
	}
	w := bufio.NewWriter(stdout)
	for {
		srcs, err := readIDs(src, o.batch, c.Vocab, b, false)
		if err != nil {
			return err
		}
		tgts, err := readIDs(tgt, o.batch, c.Vocab, b, true)
		if err != nil {
			return err
		}
		switch {
		case len(srcs) < len(tgts):
			return errors.Errorf("%s ends after %d lines, and %s has more", o.srcPath, src.Line(), o.tgtPath)
		case len(tgts) < len(srcs):
			return errors.Errorf("%s ends after %d lines, and %s has more", o.tgtPath, tgt.Line(), o.srcPath)
		}
		if len(srcs) == 0 {
			return nil
		}
		scores, err := model.ScorePairs(rt, m, params, srcs, tgts, o.batch)
		if err != nil {
			return errors.Wrapf(err, "lines %d to %d", src.Line()-len(srcs)+1, src.Line())
		}
		first := src.Line() - len(srcs) + 1
		for i, s := range scores {
			if math.IsNaN(s) || math.IsInf(s, 0) {
				w.Flush()
				return errors.Errorf("line %d: the score is %v, not a number a model with finite log-probabilities gives (are its weights too large?)", first+i, s)
			}
			fmt.Fprintf(w, "%.6f\n", s)
		}
		if err := w.Flush(); err != nil {
			return errors.Wrap(err, "writing the scores")
		}
	}
}

// load reads the model, of any kind that generates, and its weights.
func load(path, from string, heads int) (model.Model, *graph.Params, error) {
	if from != "torch" {
		m, params, err := checkpoint.Load(path, tensor.Float32, nil)
		if err == nil && !decode.Generates(m) && !m.Layout().Aligned {
			err = errors.Errorf("%s holds a model of kind %s, which scores no targets", path, m.Config().Kind)
		}
		return m, params, err
	}
	cfg, params, err := checkpoint.ImportTorch(path, heads, tensor.Float32)
	if err != nil {
		return nil, nil, err
	}
	m, err := model.New(cfg)
	return m, params, err
}

// readIDs reads the next n sequences of lr (fewer at its end), one a
// line of ids of the vocabulary but PadID (data.ParseIDs): sources within the bound b (cut if it
// truncates them), or with target targets, each starting with the start
// token and at most the model's max_len ids.
func readIDs(lr *data.LineReader, n, vocab int, b srcflags.Bound, target bool) ([][]int, error) {
	var seqs [][]int
	for len(seqs) < n {
		line, ok, err := lr.Next()
		if err != nil || !ok {
			return seqs, err
		}
		where := fmt.Sprintf("%s:%d", lr.Name(), lr.Line())
		seq, err := data.ParseIDs(line, data.PadID+1, vocab)
		if err != nil {
			return nil, errors.Wrap(err, where)
		}
		if target {
			err = checkTarget(b, where, seq)
		} else {
			seq, err = cutSource(b, where, seq)
		}
		if err != nil {
			return nil, err
		}
		seqs = append(seqs, seq)
	}
	return seqs, nil
}

// checkTarget refuses a target that does not start with the start token
// and go on, or that is longer than the model takes.
func checkTarget(b srcflags.Bound, where string, seq []int) error {
	if seq[0] != data.BOSID || len(seq) < 2 {
		return errors.Errorf("%s: a target starts with the start token %d and has a token after it", where, data.BOSID)
	}
	return b.Target(where, len(seq))
}

// cutSource is the source seq within the bound b: as it is, or cut to
// b.Max ids (keeping its EOSID at the end, if it has one) when b truncates.
func cutSource(b srcflags.Bound, where string, seq []int) ([]int, error) {
	keep, err := b.Source(where, len(seq))
	switch {
	case err != nil || keep == len(seq):
		return seq, err
	case seq[len(seq)-1] == data.EOSID:
		return append(seq[:keep-1], data.EOSID), nil
	}
	return seq[:keep], nil
}
