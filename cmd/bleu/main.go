// Command bleu scores detokenized hypotheses against references with corpus
// BLEU, and optionally chrF, computed and printed as sacreBLEU 2.6.0 does.
//
// Usage:
//
//	bleu -ref REF [-hyp HYP] [-lc] [-tok 13a|none] [-smooth METHOD] [-smooth-value V] [-chrf]
//
// The hypotheses are read from HYP, or from standard input without -hyp,
// one sentence a line, and line i is scored against line i of REF. Files
// whose names end in .gz are decompressed. Trailing whitespace is removed
// from every line, as sacreBLEU's command line does. The output is the BLEU
// score line and its signature:
//
//	BLEU = 28.21 68.0/41.3/21.4/10.5 (BP = 1.000 ratio = 1.087 hyp_len = 50 ref_len = 46)
//	nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0
//
// With -chrf, the chrF2 line and its signature follow. The -lc, -tok and
// -smooth flags affect BLEU only; chrF is always sacreBLEU's default chrF2.
//
// On an error, such as inputs with different numbers of lines, an empty
// reference line or a line that is not valid UTF-8, bleu prints one line
// to standard error and exits with status 1; bad flags exit with status 2.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/trainer/bleu"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// config holds the parsed command line.
type config struct {
	ref, hyp string
	opt      bleu.Options
	chrf     bool
}

// run executes the command with the given arguments and streams and
// returns its exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var cfg config
	fs := newFlagSet(&cfg)
	err := parse(fs, &cfg, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		printUsage(fs, stdout)
		return 0
	case err != nil:
		fmt.Fprintf(stderr, "bleu: %v (see bleu -h)\n", err)
		return 2
	}
	if err := cfg.score(stdin, stdout); err != nil {
		fmt.Fprintf(stderr, "bleu: %v\n", err)
		return 1
	}
	return 0
}

// newFlagSet returns the command's flags, bound to cfg.
func newFlagSet(cfg *config) *flag.FlagSet {
	fs := flag.NewFlagSet("bleu", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&cfg.ref, "ref", "", "reference `file`, one sentence a line (required)")
	fs.StringVar(&cfg.hyp, "hyp", "", "hypothesis `file` (default: standard input)")
	fs.BoolVar(&cfg.opt.Lowercase, "lc", false, "lowercase before computing BLEU")
	fs.StringVar(&cfg.opt.Tokenize, "tok", bleu.Tokenize13a, "BLEU tokenizer: 13a or none")
	fs.StringVar(&cfg.opt.Smooth, "smooth", bleu.SmoothExp, "BLEU smoothing `method`: exp, none, floor or add-k")
	fs.Float64Var(&cfg.opt.SmoothValue, "smooth-value", 0, "smoothing value for floor and add-k (0: 0.1 for floor, 1 for add-k)")
	fs.BoolVar(&cfg.chrf, "chrf", false, "also print chrF2 and its signature after BLEU")
	return fs
}

// parse parses args into cfg and checks them.
func parse(fs *flag.FlagSet, cfg *config, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return errors.Errorf("unexpected argument %q", fs.Arg(0))
	case cfg.ref == "":
		return errors.New("-ref is required")
	}
	return cfg.opt.Validate()
}

// printUsage writes the command's help to w.
func printUsage(fs *flag.FlagSet, w io.Writer) {
	fmt.Fprint(w, `Usage: bleu -ref REF [-hyp HYP] [flags]

bleu prints the corpus BLEU of the hypotheses (HYP, or standard input) against
the references (REF), one sentence a line, and its signature, as sacreBLEU
2.6.0 does. Files ending in .gz are decompressed.

Flags:
`)
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}

// score reads the inputs, scores them and writes the result to stdout.
func (c config) score(stdin io.Reader, stdout io.Writer) error {
	refs, err := bleu.ReadFile(c.ref)
	if err != nil {
		return err
	}
	hyps, hypName, err := c.readHyps(stdin)
	if err != nil {
		return err
	}
	if len(hyps) != len(refs) {
		return errors.Errorf("hypotheses (%s) have %d lines but references (%s) have %d",
			hypName, len(hyps), c.ref, len(refs))
	}
	out, err := c.report(hyps, refs)
	if err != nil {
		return errors.Wrapf(err, "scoring %s against %s", hypName, c.ref)
	}
	_, err = io.WriteString(stdout, out)
	return errors.Wrap(err, "writing the result")
}

// readHyps reads the hypotheses and returns them with the name of their
// source.
func (c config) readHyps(stdin io.Reader) ([]string, string, error) {
	if c.hyp == "" {
		hyps, err := bleu.ReadLines(stdin, "stdin")
		return hyps, "stdin", err
	}
	hyps, err := bleu.ReadFile(c.hyp)
	return hyps, c.hyp, err
}

// report computes the requested scores and formats them with their
// signatures.
func (c config) report(hyps, refs []string) (string, error) {
	s, err := bleu.Corpus(hyps, refs, c.opt)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%v\n%s\n", s, c.opt.Signature())
	if !c.chrf {
		return b.String(), nil
	}
	var chrfOpt bleu.ChrFOptions
	cs, err := bleu.ChrF(hyps, refs, chrfOpt)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(&b, "%v\n%s\n", cs, chrfOpt.Signature())
	return b.String(), nil
}
