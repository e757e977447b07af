// Command translate translates sentences with a model trained by cmd/train.
//
// Usage:
//
//	translate -model DIR[,DIR...] [-checkpoint best|final|averaged|FILE] [-input FILE]
//	          [-method beam|greedy|sample] [-beam 4] [-alpha 0.6] [-nbest N]
//	          [-temperature T] [-top-k K] [-top-p P] [-seed S] [-max-len N] [-batch 32]
//	          [-max-src-len N] [-long error|truncate]
//	          [-score TARGETS] [-attention PNG [-attention-line N] [-layer L] [-head H]]
//	          [-prompt]
//
// DIR is a training output directory of cmd/train. A run on files holds the
// checkpoints, bpe.txt and vocab.txt; a run on a synthetic task (copy,
// reverse, sort) has no tokenizer, and its lines are token ids: decimal
// integers separated by spaces, from 4 (the first symbol) to the
// vocabulary's size less one, such as "4 5 6 7 8", and so are its outputs.
// The model is an encoder-decoder
// or a decoder-only model (which reads a sentence as the prompt "sentence
// EOS", as cmd/train trains it on pairs). The sentences are read from -input, or
// standard input, one a line; each is tokenized with the run's BPE and
// vocabulary, decoded (beam search with beam 4 and length penalty α 0.6 by
// default, as in the paper; greedy; or sampling with a temperature, top-k and
// top-p), detokenized and printed, one line each, in the order read. Outputs
// are at most the source's length plus 50 tokens long unless -max-len says
// otherwise, and never longer than the model's max_len. Input (plain or
// gzip-compressed) is read a line at a time, each at most 1 MiB; a sentence
// of more tokens, with its EOS (a prompt with the BOS before it), than
// -max-src-len (by default the model's max_len, and at most 1,024 with
// sinusoidal positions) is an error naming its line, or with -long truncate
// is cut off with a warning; one longer than any the run trained on (its
// checkpoint records the longest) is translated with a warning naming its
// line. A batch whose caches (beam × sentences ×
// positions) would not fit in the memory the machine has available is
// refused before it is allocated.
//
// Several directories, separated by commas, make an ensemble (a -model
// that exists as it is, commas and all, is one directory): at every
// step the search reads the mean of the models' next-token distributions
// (decode.NewEnsemble). Each directory's -checkpoint is loaded, and the
// runs must share one tokenizer (the same bpe.txt and vocab.txt, as runs of
// one command with different -seed have). An ensemble translates and
// continues prompts; -score, -attention and tagging take one model.
//
// With -nbest N each sentence has N lines "LINE\tSCORE\tTRANSLATION": its N
// best hypotheses of the beam search, LINE counting input lines from 1 and
// SCORE being the log-probability divided by the length penalty.
//
// With -score TARGETS nothing is translated: line i of TARGETS is taken as
// the translation of input line i and the output is its teacher-forced
// log-probability Σ_t log p(y_t | y_<t, x), EOS included, one a line. A
// target of more tokens, with BOS and EOS, than the model's max_len is an
// error naming its line, whatever -long says.
//
// With -prompt the lines are prompts for a decoder-only model, such as a
// language model cmd/train trains on text: each is continued (by the
// chosen method, up to -max-len tokens or its length plus 50, within the
// model's max_len) and printed, one line each, as the prompt, a tab where
// the continuation starts, and the continuation.
//
// The input is read a batch (-batch lines) at a time, and each batch's
// output is written, in input order, as soon as it is done: translate
// works in bounded memory on input of any length.
//
// A model that does not generate but predicts a token at every source
// position (an encoder-only model, a tagger) prints, for each line, the
// tokens it predicts up to the first EOS.
//
// With -attention PNG, the cross-attention of the sentence on input line
// -attention-line (1 by default) to its translation (or its target with
// -score) is drawn as a heat map labelled with the source and target tokens:
// decoder layer -layer (counted from 0; -1, the default, is the last) and
// head -head (from 0; -1, the default, averages the heads).
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/cmd/internal/runtimeflag"
	"github.com/transformer-go/transformer/cmd/internal/srcflags"
	"github.com/transformer-go/transformer/data"
	"github.com/transformer-go/transformer/internal/cliflag"
	"github.com/transformer-go/transformer/model/decode"
	"github.com/transformer-go/transformer/trainer/rundir"
)

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil && !errors.Is(err, flag.ErrHelp) { // -h printed the usage: exit 0
		fmt.Fprintln(os.Stderr, "translate:", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	dir, checkpoint, input, score string
	dirs                          []string // -model's directories
	search                        decode.Search
	seed                          uint64
	attention                     string
	attentionLine, layer, head    int
	src                           srcflags.Flags
	prompt                        bool
	runtime                       *runtimeflag.Flags
	warn                          io.Writer // warnings: standard error
}

func newFlags(fs *flag.FlagSet) *options {
	o := &options{search: decode.DefaultSearch()}
	s := &o.search
	o.runtime = runtimeflag.Register(fs)
	fs.StringVar(&o.dir, "model", "", "training output directory of cmd/train (required); several, separated by commas, translate as an ensemble")
	fs.StringVar(&o.checkpoint, "checkpoint", "best", "weights: best, final or averaged (the directory's NAME.safetensors), or a file (a relative path is in -model's directory)")
	fs.StringVar(&o.input, "input", "", "sentences to translate, one a line (default: standard input)")
	fs.StringVar(&s.Method, "method", s.Method, "decoding: beam, greedy or sample")
	fs.IntVar(&s.Beam, "beam", s.Beam, "beam size")
	fs.Float64Var(&s.Alpha, "alpha", s.Alpha, "length penalty α of beam search: scores are log p / ((5 + length) / 6)^α")
	fs.IntVar(&s.NBest, "nbest", s.NBest, "print the N best translations of each sentence, with their scores (beam search)")
	fs.Float64Var(&s.Temperature, "temperature", s.Temperature, "sampling: divide the logits by this")
	fs.IntVar(&s.TopK, "top-k", 0, "sampling: draw from the K most probable tokens (0: all)")
	fs.Float64Var(&s.TopP, "top-p", 0, "sampling: draw from the fewest most probable tokens whose probability reaches P (0: all)")
	fs.Uint64Var(&o.seed, "seed", 1, "sampling: random seed")
	fs.IntVar(&s.MaxLen, "max-len", 0, "longest translation in tokens (0: the source's length + 50)")
	fs.IntVar(&s.Batch, "batch", s.Batch, "sentences decoded together")
	o.src.Register(fs)
	fs.StringVar(&o.score, "score", "", "score the translations in this file (line i translates input line i) instead of translating")
	fs.StringVar(&o.attention, "attention", "", "draw the cross-attention of one sentence into this PNG file")
	fs.IntVar(&o.attentionLine, "attention-line", 1, "with -attention: the input line of the sentence")
	cliflag.Int(fs, &o.layer, "layer", "with -attention: decoder `layer` from 0 (default, or -1: the last)")
	cliflag.Int(fs, &o.head, "head", "with -attention: `head` from 0 (default, or -1: the average of the heads)")
	fs.BoolVar(&o.prompt, "prompt", false, "the lines are prompts for a decoder-only model: print each, a tab, and its continuation")
	return o
}

// summaryLine says what the command does, atop -h.
const summaryLine = "translate translates sentences, one a line, with the model of a cmd/train run directory (or an ensemble), or continues prompts with a language model, or tags them with an encoder-only model."

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("translate", flag.ContinueOnError)
	o := newFlags(fs)
	if err := cliflag.Parse(fs, args, "translate -model DIR[,DIR...] [flags] < sentences", summaryLine, stdout); err != nil {
		return err
	}
	o.warn = stderr
	if err := o.check(fs); err != nil {
		return err
	}
	rt, err := o.runtime.Open(stderr)
	if err != nil {
		return err
	}
	// The inputs are opened before the model is loaded, so that a missing
	// one is found before that work.
	in, err := openInput(o.input, stdin)
	if err != nil {
		return err
	}
	defer in.Close()
	var targets *data.LineReader
	if o.score != "" {
		if targets, err = data.OpenLines(o.score); err != nil {
			return errors.Wrap(err, "-score")
		}
		defer targets.Close()
	}
	t, err := load(o.dirs, o.checkpoint, rt)
	if err != nil {
		return err
	}
	if err := o.checkModel(t); err != nil {
		return err
	}
	picked, err := o.stream(t, in, targets, stdout)
	if err != nil || o.attention == "" {
		return err
	}
	return t.drawAttention(o.attention, picked, o.layer, o.head)
}

// stream translates or scores the input a batch of lines at a time,
// writing each batch's results, in input order, as soon as it is done: in
// memory bounded by the batch, however long the input; targets (nil
// without -score) are the translations to score. It returns the
// pair of -attention-line.
func (o *options) stream(t *translator, in, targets *data.LineReader, stdout io.Writer) (pair, error) {
	b, err := o.src.Bound(t.config(), "translate", o.warn)
	if err != nil {
		return pair{}, err
	}
	var d *decode.Decoder
	if !t.tags() {
		if d, err = decode.NewEnsemble(t.rt, t.members()...); err != nil {
			return pair{}, err
		}
		defer d.Close()
	}
	w := bufio.NewWriter(stdout)
	var picked *pair
	for first := 0; ; {
		chunk, err := readChunk(in, first, o.search.Batch)
		if err != nil || len(chunk.text) == 0 {
			if err == nil {
				err = o.checkEnd(in, targets, first, picked != nil)
			}
			return derefPair(picked), err
		}
		pairs, err := o.process(t, d, chunk, targets, b, w)
		if err != nil {
			return pair{}, err
		}
		if i := o.attentionLine - 1 - first; o.attention != "" && i >= 0 && i < len(pairs) {
			picked = &pairs[i]
		}
		if err := w.Flush(); err != nil {
			return pair{}, errors.Wrap(err, "writing the output")
		}
		first += len(chunk.text)
	}
}

// checkEnd checks, once the input has ended after n lines, that the
// targets of -score have ended too and that -attention-line was one of
// the lines.
func (o *options) checkEnd(in, targets *data.LineReader, n int, picked bool) error {
	if targets != nil {
		_, more, err := targets.Next()
		if err != nil {
			return err
		}
		if more {
			return errors.Errorf("%s has more lines than the %d of %s", targets.Name(), n, in.Name())
		}
	}
	if o.attention != "" && !picked {
		return errors.Errorf("-attention-line %d: %s has %d lines", o.attentionLine, in.Name(), n)
	}
	return nil
}

func derefPair(p *pair) pair {
	if p == nil {
		return pair{}
	}
	return *p
}

// unused refuses a flag given where it has no effect (sampling's with
// another method, beam search's with another, -attention's without it,
// decoding's with -score), which would otherwise be silently ignored.
func (o *options) unused(fs *flag.FlagSet) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		var need string
		switch f.Name {
		case "temperature", "top-k", "top-p", "seed":
			if o.search.Method != decode.MethodSample {
				need = "-method sample"
			}
		case "beam", "alpha":
			if o.search.Method != decode.MethodBeam {
				need = "-method beam"
			}
		case "attention-line", "layer", "head":
			if o.attention == "" {
				need = "-attention"
			}
		}
		switch f.Name {
		case "method", "beam", "alpha", "nbest", "temperature", "top-k", "top-p", "seed", "max-len":
			if o.score != "" && need == "" {
				err = errors.Errorf("-%s has no effect with -score, which scores the given translations instead of decoding", f.Name)
			}
		}
		if need != "" && err == nil {
			err = errors.Errorf("-%s has no effect without %s (have -method %s)", f.Name, need, o.search.Method)
			if need == "-attention" {
				err = errors.Errorf("-%s has no effect without -attention", f.Name)
			}
		}
	})
	return err
}

// check reports bad flag combinations.
func (o *options) check(fs *flag.FlagSet) error {
	if fs.NArg() > 0 {
		return errors.Errorf("unexpected arguments %q (flags start with -)", fs.Args())
	}
	if err := o.splitDirs(); err != nil {
		return err
	}
	if o.search.Method == decode.MethodSample {
		o.search.Rand = rand.New(rand.NewPCG(o.seed, 0))
	}
	if o.search.Method != decode.MethodBeam && o.search.NBest != 1 {
		return errors.Errorf("-nbest %d needs -method beam", o.search.NBest)
	}
	if err := o.unused(fs); err != nil {
		return err
	}
	if err := o.src.Check(); err != nil {
		return err
	}
	if o.search.MaxLen < 0 {
		return errors.Errorf("-max-len %d: want 0 (the source's length + %d) or more", o.search.MaxLen, decode.DefaultExtraLen)
	}
	if o.search.Batch < 1 || o.search.Batch > srcflags.MaxBatch {
		return errors.Errorf("-batch %d: want 1 to %d (the input is read a batch at a time)", o.search.Batch, srcflags.MaxBatch)
	}
	if o.attention != "" && o.attentionLine < 1 {
		return errors.Errorf("-attention-line %d: lines count from 1", o.attentionLine)
	}
	if err := checkOutput("-attention", o.attention); err != nil {
		return err
	}
	for _, dir := range o.dirs {
		if err := rundir.Outside("-attention", o.attention, dir); err != nil {
			return err
		}
	}
	if err := rundir.NotInput("-attention", o.attention, "-input", o.input, "-score", o.score, "-checkpoint", o.checkpoint); err != nil {
		return err
	}
	if o.prompt && o.score != "" {
		return errors.New("-prompt continues prompts; -score scores translations: give one")
	}
	return errors.Wrap(o.search.Validate(), "flags")
}

// splitDirs reads -model's directories, refusing none, an empty one and
// an ensemble with a flag that takes one model. A -model that exists as it
// is names one directory, whose name may hold commas.
func (o *options) splitDirs() error {
	if o.dir == "" {
		return errors.New("-model DIR is required")
	}
	o.dirs = []string{o.dir}
	if _, err := os.Stat(o.dir); err != nil {
		o.dirs = strings.Split(o.dir, ",")
	}
	for i, dir := range o.dirs {
		if dir == "" {
			return errors.Errorf("-model %q: directory %d of the list is empty", o.dir, i+1)
		}
	}
	switch {
	case len(o.dirs) > 1 && o.score != "":
		return errors.Errorf("-score takes one model; -model names %d", len(o.dirs))
	case len(o.dirs) > 1 && o.attention != "":
		return errors.Errorf("-attention takes one model; -model names %d", len(o.dirs))
	}
	return nil
}

// checkModel reports flags the loaded model cannot serve: outputs longer
// than its max_len; prompts need a model without sources, cross-attention maps
// one with sources.
func (o *options) checkModel(t *translator) error {
	cfg := t.config()
	kind, sources := cfg.Kind, t.m.Layout().Sources
	switch {
	case o.search.MaxLen > cfg.MaxLen:
		return errors.Errorf("-max-len %d: the model takes at most %d tokens (its max_len)", o.search.MaxLen, cfg.MaxLen)
	case o.prompt && sources:
		return errors.Errorf("-prompt needs a model that continues prompts, such as a decoder-only model; %s holds a %s model", o.dir, kind)
	case o.attention != "" && (!sources || t.tags()):
		return errors.Errorf("-attention draws cross-attention, which the %s model has not", kind)
	case t.tags() && (o.score != "" || o.search.NBest > 1):
		return errors.Errorf("%s holds a %s model, which tags each source position: -score and -nbest are for a model that generates", o.dir, kind)
	case o.attention != "" && (o.layer < -1 || o.layer >= cfg.DecoderLayers):
		return errors.Errorf("-layer %d: the decoder's layers are 0 to %d (-1: the last)", o.layer, cfg.DecoderLayers-1)
	case o.attention != "" && (o.head < -1 || o.head >= cfg.Heads):
		return errors.Errorf("-head %d: the heads are 0 to %d (-1: their average)", o.head, cfg.Heads-1)
	}
	return nil
}

// process translates or scores a chunk of the input (with d, or the
// chunk's lines of targets), writing the results to w, and returns every
// sentence's source and target ids.
func (o *options) process(t *translator, d *decode.Decoder, in lines, targets *data.LineReader, b srcflags.Bound, w io.Writer) ([]pair, error) {
	srcs, err := t.sources(in, o.prompt, b)
	if err != nil {
		return nil, err
	}
	if targets != nil {
		return t.score(srcs, in, targets, o.search.Batch, b, w)
	}
	if t.tags() {
		return t.tag(srcs, in, o.search.Batch, w)
	}
	return t.translate(d, srcs, in, o.search, o.prompt, w)
}

// pair is a sentence's source ids (with EOS) and target ids (without BOS or EOS).
type pair struct{ src, tgt []int }

// writeHypotheses writes the translations of one sentence, each after
// prefix (a prompt and a tab, or ""): the best alone, or with -nbest each
// with its line number and score.
func (t *translator) writeHypotheses(w io.Writer, line int, prefix string, hyps []decode.Hypothesis, nbest bool) {
	if !nbest {
		fmt.Fprintln(w, prefix+t.tok.decode(hyps[0].Tokens))
		return
	}
	for _, h := range hyps {
		fmt.Fprintf(w, "%d\t%.4f\t%s%s\n", line, h.Score, prefix, strings.TrimSpace(t.tok.decode(h.Tokens)))
	}
}
