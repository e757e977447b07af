// Command export writes a model trained by cmd/train as ONNX models, for
// ONNX Runtime and the other runtimes that read ONNX: an export of the
// model's own graph, each op in its ONNX form (opset 17, IR version 8).
//
// Usage:
//
//	export -model DIR -out DIR [-checkpoint best|final|averaged|FILE]
//	       [-batch 1] [-src-len N] [-tgt-len N] [-steps N] [-force]
//
// -model is a training output directory of cmd/train, whose -checkpoint
// (best by default) is exported into the directory -out (made if
// missing):
//
//   - encoder.onnx, for an encoder-decoder: the sources' ids src [batch,
//     src-len] (padded with 0, each ending with EOS, 2) to every decoder
//     layer's cross-attention keys and values;
//   - step.onnx, for a model that generates (an encoder-decoder or a
//     decoder-only model): one decoding step, each row's previous token
//     step_ids [batch, 1] at position slot [1] under slot_mask [1, 1, 1,
//     steps] (0 up to slot, -Inf after) against the key/value caches,
//     which are inputs ("decoder.layers.0.self_attn.cache.k", zeros at the
//     first step) and outputs (their next values, the name ending with
//     ".next"), to the next token's log-probabilities logp [batch, 1,
//     vocab]; an encoder-decoder's also reads the encoder's outputs and the
//     sources row_src;
//   - tagger.onnx, for an encoder-only model: src to the log-probabilities
//     logp [batch, src-len, vocab] at every position;
//   - scorer.onnx, for every model: the teacher-forced scorer, from src
//     (unless decoder-only), tgt_in [batch, tgt-len] (unless encoder-only)
//     and the targets tgt_out [batch, tgt-len] to scores [batch·tgt-len, 2],
//     each target's log-probability and 1 if it is the most probable
//     token, both 0 where the target is 0 (padding).
//
// The shapes are fixed: -batch rows, -src-len source positions (128 by
// default), -tgt-len target positions (128; an encoder-only model's
// targets are at its source positions) and -steps cache positions (256, the
// most steps a row decodes, a decoder-only model's prompt included), each
// at most the model's max_len (the defaults are cut to it). Shorter inputs
// are padded with 0. Each file's metadata records the model's config and
// the shapes. cmd/export/greedy.js decodes greedily with encoder.onnx and
// step.onnx in ONNX Runtime under Node.
//
// A model that holds an op without an ONNX form (a variant of one's own
// that declares none) is refused, naming the op, before anything is
// written; so is a model of a kind that neither generates nor tags, a
// size that the model's graphs do not read (-steps of an encoder-only
// model), and an -out inside a run directory (a run holds its own files
// alone). Every file is written whole or not at all (written beside, then
// renamed), and an existing one is an error unless -force replaces it.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/inference"
	"github.com/transformer-go/transformer/internal/atomicfile"
	"github.com/transformer-go/transformer/internal/cliflag"
	"github.com/transformer-go/transformer/model"
	"github.com/transformer-go/transformer/trainer/rundir"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil && !errors.Is(err, flag.ErrHelp) { // -h printed the usage: exit 0
		fmt.Fprintln(os.Stderr, "export:", err)
		os.Exit(1)
	}
}

// The default sizes of the graphs, cut to the model's max_len.
const (
	defaultSrcLen = 128
	defaultTgtLen = 128
	defaultSteps  = 256
)

// options are the command's flags.
type options struct {
	dir, checkpoint, out string
	shape                inference.ONNXShape
	force                bool
}

func newFlags(fs *flag.FlagSet) *options {
	o := &options{}
	fs.StringVar(&o.dir, "model", "", "training output directory of cmd/train (required)")
	fs.StringVar(&o.checkpoint, "checkpoint", "best", "weights: best, final or averaged (the directory's NAME.safetensors), or a file (a relative path is in -model's directory)")
	fs.StringVar(&o.out, "out", "", "directory to write the ONNX files into, made if missing (required)")
	fs.IntVar(&o.shape.Batch, "batch", 1, "rows of every graph")
	cliflag.Int(fs, &o.shape.SrcLen, "src-len", fmt.Sprintf("source `positions` (default %d, or the model's max_len if less)", defaultSrcLen))
	cliflag.Int(fs, &o.shape.TgtLen, "tgt-len", fmt.Sprintf("the scorer's target `positions` (default %d, or the model's max_len if less)", defaultTgtLen))
	cliflag.Int(fs, &o.shape.Steps, "steps", fmt.Sprintf("the step graph's cache `positions` (default %d, or the model's max_len if less)", defaultSteps))
	fs.BoolVar(&o.force, "force", false, "replace ONNX files that -out already holds")
	return o
}

// check reports stray arguments, missing flags and sizes below 1.
func (o *options) check(fs *flag.FlagSet) error {
	switch {
	case fs.NArg() > 0:
		return errors.Errorf("unexpected arguments %q (flags start with -)", fs.Args())
	case o.dir == "" || o.out == "":
		return errors.New("-model and -out are required")
	case o.shape.Batch < 1:
		return errors.Errorf("-batch %d: want 1 or more", o.shape.Batch)
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"-src-len", o.shape.SrcLen}, {"-tgt-len", o.shape.TgtLen}, {"-steps", o.shape.Steps}} {
		if f.v != cliflag.Unset && f.v < 1 {
			return errors.Errorf("%s %d: want 1 or more", f.name, f.v)
		}
	}
	if fi, err := os.Stat(o.dir); err != nil || !fi.IsDir() {
		return errors.Errorf("-model %s: not a directory of cmd/train", o.dir)
	}
	if fi, err := os.Stat(o.out); err == nil && !fi.IsDir() {
		return errors.Errorf("-out %s is a file, not a directory", o.out)
	}
	for _, name := range []string{inference.ONNXEncoder, inference.ONNXStep, inference.ONNXScorer, inference.ONNXTagger} {
		if err := rundir.Outside("-out", filepath.Join(o.out, name), o.dir); err != nil {
			return err
		}
	}
	return nil
}

// summaryLine says what the command does, atop -h.
const summaryLine = "export writes a model trained by cmd/train as ONNX files: the encoder, one decoding step with its key/value caches, the teacher-forced scorer (or an encoder-only model's tagger)."

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	o := newFlags(fs)
	if err := cliflag.Parse(fs, args, "export -model DIR -out DIR [flags]", summaryLine, stdout); err != nil {
		return err
	}
	if err := o.check(fs); err != nil {
		return err
	}
	r, err := inference.Load(o.dir, o.checkpoint)
	if err != nil {
		return errors.Wrap(err, "-model, -checkpoint")
	}
	sh, err := o.sizes(r.Model)
	if err != nil {
		return err
	}
	names := inference.ONNXFiles(r.Model)
	if err := o.checkFree(names); err != nil {
		return err
	}
	files, err := inference.ExportONNX(r.Model, r.Params, sh)
	if err != nil {
		return err
	}
	return o.write(files, names, stdout)
}

// sizes is the graphs' shape for the model m: the flags', the defaults
// cut to the model's max_len where they were not given; a given size above
// it, or that m's graphs do not read, is an error.
func (o *options) sizes(m model.Model) (inference.ONNXShape, error) {
	sh, maxLen := o.shape, m.Config().MaxLen
	read := inference.ONNXShape{SrcLen: 1, TgtLen: 1, Steps: 1}.For(m)
	for _, f := range []struct {
		name      string
		v         *int
		def, read int
	}{{"-src-len", &sh.SrcLen, defaultSrcLen, read.SrcLen}, {"-tgt-len", &sh.TgtLen, defaultTgtLen, read.TgtLen}, {"-steps", &sh.Steps, defaultSteps, read.Steps}} {
		switch {
		case *f.v == cliflag.Unset:
			*f.v = min(f.def, maxLen)
		case f.read == 0:
			return sh, errors.Errorf("%s: a model of kind %s has no such graph (see -h)", f.name, m.Config().Kind)
		case *f.v > maxLen:
			return sh, errors.Errorf("%s %d: above the model's max_len %d", f.name, *f.v, maxLen)
		}
	}
	return sh, nil
}

// checkFree refuses, unless -force, files of -out named as the ONNX files
// to write.
func (o *options) checkFree(names []string) error {
	if o.force {
		return nil
	}
	for _, name := range names {
		path := filepath.Join(o.out, name)
		if _, err := os.Lstat(path); err == nil {
			return errors.Errorf("%s exists: -force replaces it", path)
		}
	}
	return nil
}

// write writes the files into -out, each atomically, and names them on
// stdout.
func (o *options) write(files map[string][]byte, names []string, stdout io.Writer) error {
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return errors.Wrap(err, "-out")
	}
	for _, name := range slices.Sorted(slices.Values(names)) {
		path := filepath.Join(o.out, name)
		if err := atomicfile.WriteBytes(path, files[name]); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s\t%d bytes\n", path, len(files[name]))
	}
	return nil
}
