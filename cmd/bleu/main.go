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
// The inputs are read a line of each at a time, so they may be of any
// length: bleu keeps only the scores' statistics.
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

	"github.com/transformer-go/transformer/data"
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

// score reads the inputs a pair of lines at a time, adding each pair to
// the scores' statistics, so that inputs of any length take bounded
// memory, and writes the result to stdout.
func (c config) score(stdin io.Reader, stdout io.Writer) error {
	refs, err := data.OpenLines(c.ref)
	if err != nil {
		return err
	}
	defer refs.Close()
	hyps, err := c.openHyps(stdin)
	if err != nil {
		return err
	}
	defer hyps.Close()
	var chrf *bleu.ChrFOptions
	if c.chrf {
		chrf = &bleu.ChrFOptions{}
	}
	acc, err := bleu.NewAccumulator(c.opt, chrf)
	if err != nil {
		return err
	}
	if err := addPairs(acc, hyps, refs); err != nil {
		return err
	}
	out, err := c.report(acc)
	if err != nil {
		return errors.Wrapf(err, "scoring %s against %s", hyps.Name(), c.ref)
	}
	_, err = io.WriteString(stdout, out)
	return errors.Wrap(err, "writing the result")
}

// addPairs adds every pair of lines of hyps and refs to acc; inputs of
// different lengths are an error. Errors name the file and line.
func addPairs(acc *bleu.Accumulator, hyps, refs *data.LineReader) error {
	for {
		h, hok, err := bleu.NextLine(hyps)
		if err != nil {
			return err
		}
		r, rok, err := bleu.NextLine(refs)
		if err != nil {
			return err
		}
		switch {
		case !hok && !rok:
			return nil
		case !hok:
			return errors.Errorf("hypotheses (%s) have %d lines but references (%s) have more", hyps.Name(), acc.Pairs(), refs.Name())
		case !rok:
			return errors.Errorf("hypotheses (%s) have more lines than the %d of the references (%s)", hyps.Name(), acc.Pairs(), refs.Name())
		}
		if err := acc.Add(h, r); err != nil {
			return errors.Wrapf(err, "scoring %s against %s", hyps.Name(), refs.Name())
		}
	}
}

// openHyps opens the hypotheses: -hyp, or standard input ("stdin").
func (c config) openHyps(stdin io.Reader) (*data.LineReader, error) {
	if c.hyp == "" {
		return data.NewLineReader("stdin", stdin)
	}
	return data.OpenLines(c.hyp)
}

// report formats the requested scores with their signatures.
func (c config) report(acc *bleu.Accumulator) (string, error) {
	s, err := acc.BLEU()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%v\n%s\n", s, c.opt.Signature())
	if c.chrf {
		fmt.Fprintf(&b, "%v\n%s\n", acc.ChrF(), bleu.ChrFOptions{}.Signature())
	}
	return b.String(), nil
}
