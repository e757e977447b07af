// Command bench measures this project's speed and memory beside PyTorch's on
// the same machine, each timed the same careful way: -warmup untimed runs,
// then the median of -runs timed ones, every measurement in its own process
// so that each peak RSS is its own. Each row is measured -rounds times, ours
// and PyTorch's in turn, and the medians are printed, with the median of the
// rounds' ratios: a machine whose speed drifts (a shared one) then moves
// both sides alike.
//
//	go run ./cmd/bench -torch
//	CGO_LDFLAGS=-lopenblas go run -tags openblas ./cmd/bench -torch
//
// The rows:
//
//   - train and forward, for each -presets and -vocabs: target tokens per
//     second of a training step (forward, backward and Adam; label-smoothed
//     cross-entropy) and of a forward pass with its loss, at batch 32, source
//     and target length 32 (-shape);
//   - greedy decoding at batch 1 and 32 (-decode-batches) and beam search
//     (beam 4, α 0.6) at batch 1, with -decode: output tokens per second of
//     the tiny preset (-decode-preset) with vocabulary 8,000 and random
//     weights, sources of 16 tokens, outputs of up
//     to 32 (the end token's embedding zeroed on both sides, so that every
//     output runs to 32 and both decode as many tokens). PyTorch decodes
//     with a key/value cache written in the script, as the Go decoder does.
//
// PyTorch comes from Debian's python3-torch through /usr/bin/python3, with
// its fused F.cross_entropy(label_smoothing=0.1) and zero_grad(set_to_none=True),
// run with GOMAXPROCS OpenMP threads on the OpenMP build of OpenBLAS
// (libopenblas0-openmp): with the default pthread build it oversubscribes
// the cores and runs 2-3 times slower, which would flatter this project.
//
// With -precision bf16 both sides multiply matrices in bfloat16 with float32
// sums: ours with graph.BF16, PyTorch under torch.autocast("cpu",
// dtype=torch.bfloat16):
//
//	go run ./cmd/bench -torch -precision bf16
//
// With -device cuda ours run on the GPU and PyTorch on it too (-python names
// the Python that has a CUDA PyTorch; autocast("cuda") with bf16), timed
// after the device has finished each run:
//
//	bench -device cuda -torch -python python3 -presets base -shape 64x64 -decode-preset base -decode-batches 1,64
//
// With -scaling it prints instead how much faster a training step of each
// -presets and -vocabs runs at GOMAXPROCS than on one core, from -runs
// pairs of steps, one on each, taken in turn so that both meet the machine
// in the same state:
//
//	go run ./cmd/bench -scaling -presets small -vocabs 8000
//
// With -bf16-speedup it prints instead how much faster a training step of
// each -presets and -vocabs runs with bfloat16 products than in float32,
// from -runs pairs of steps, one in each precision, taken in turn:
//
//	go run ./cmd/bench -bf16-speedup -presets small -vocabs 8000 -runs 15
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/cmd/internal/runtimeflag"
	"github.com/transformer-go/transformer/internal/cliflag"
	"github.com/transformer-go/transformer/model"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil && !errors.Is(err, flag.ErrHelp) { // -h printed the usage: exit 0
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	presets, vocabs string
	warmup, runs    int
	rounds          int
	torch, decode   bool
	isolate         bool
	scaling         bool
	bf16Speedup     bool
	child           string
	shape           string
	decodePreset    string
	decodeBatches   string
	python          string
	runtime         *runtimeflag.Flags
}

// summaryLine says what the command does, atop -h.
const summaryLine = "bench measures the speed and peak memory of training, a forward pass and decoding, beside PyTorch's with -torch (or, with -scaling or -bf16-speedup, against one core or float32)."

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	var o options
	fs.StringVar(&o.presets, "presets", "tiny,small", "comma-separated presets")
	fs.StringVar(&o.vocabs, "vocabs", "1000,8000", "comma-separated vocabulary sizes")
	fs.IntVar(&o.warmup, "warmup", 3, "untimed runs before timing")
	fs.IntVar(&o.runs, "runs", 10, "timed runs; the median is reported")
	fs.IntVar(&o.rounds, "rounds", 3, "rounds of each row, ours and PyTorch's in turn; the medians are reported")
	fs.BoolVar(&o.torch, "torch", false, "also measure PyTorch (-python's, python3-torch; on the CPU with libopenblas0-openmp)")
	fs.BoolVar(&o.decode, "decode", true, "also measure decoding (tiny, vocabulary 8,000)")
	fs.BoolVar(&o.scaling, "scaling", false, "instead of the table, time training steps alternately on 1 core and on GOMAXPROCS, and print how much faster the latter are")
	fs.BoolVar(&o.bf16Speedup, "bf16-speedup", false, "instead of the table, time training steps alternately in float32 and with bf16 products, and print how much faster the latter are")
	fs.BoolVar(&o.isolate, "isolate", true, "measure each row in a process of its own (for its peak RSS)")
	fs.StringVar(&o.child, "child", "", "internal: measure one row and print it as JSON")
	fs.StringVar(&o.shape, "shape", "32x32", "batch `x` length (source and target) of the train and forward rows")
	fs.StringVar(&o.decodePreset, "decode-preset", "tiny", "preset of the decoding rows")
	fs.StringVar(&o.decodeBatches, "decode-batches", "1,32", "comma-separated batch sizes of greedy decoding (beam search runs at batch 1)")
	fs.StringVar(&o.python, "python", "/usr/bin/python3", "the Python whose PyTorch -torch measures")
	o.runtime = runtimeflag.Register(fs) // -precision bf16: PyTorch runs under torch.autocast("cpu", dtype=torch.bfloat16)
	if err := cliflag.Parse(fs, args, "bench [flags]", summaryLine, stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return errors.Errorf("unexpected arguments %q (flags start with -)", fs.Args())
	}
	if err := o.checkCounts(); err != nil {
		return err
	}
	switch {
	case o.child != "":
		return measureChild(o.child, o.warmup, o.runs, stdout)
	case o.scaling && o.bf16Speedup:
		return errors.New("-scaling and -bf16-speedup: choose one")
	case o.scaling:
		return o.scalingTable(stdout)
	case o.bf16Speedup:
		return o.bf16Table(stdout)
	}
	rows, err := o.rows()
	if err != nil {
		return err
	}
	return o.table(rows, stdout)
}

// checkCounts checks the counts of runs, every mode's, before any work.
func (o options) checkCounts() error {
	switch {
	case o.runs < 1 || o.runs > 1e6 || o.warmup < 0 || o.warmup > 1e6:
		return errors.Errorf("-warmup %d -runs %d: want 0 to 1000000 and 1 to 1000000", o.warmup, o.runs)
	case o.rounds < 1 || o.rounds > 1000:
		return errors.Errorf("-rounds %d: want 1 to 1000", o.rounds)
	}
	return nil
}

// rows are the measurements the flags ask for.
func (o options) rows() ([]row, error) {
	vs, err := ints("-vocabs", "vocabulary size", o.vocabs, model.MinVocab, model.MaxVocab)
	if err != nil {
		return nil, err
	}
	batch, length, err := parseShape(o.shape)
	if err != nil {
		return nil, err
	}
	greedy, err := ints("-decode-batches", "batch size", o.decodeBatches, 1, maxBatch)
	if err != nil {
		return nil, err
	}
	if _, err := o.runtime.Open(io.Discard); err != nil {
		return nil, err
	}
	prec, dev := string(o.runtime.Precision), string(o.runtime.Device)
	var rows []row
	for _, preset := range strings.Split(o.presets, ",") {
		for _, vocab := range vs {
			r := row{Kind: "train", Preset: preset, Vocab: vocab, Batch: batch, Len: length, Precision: prec, Device: dev}
			if err := r.checkMemory(); err != nil {
				return nil, errors.Wrapf(err, "-presets %s -vocabs %d -shape %s", preset, vocab, o.shape)
			}
			f := r
			f.Kind = "forward"
			rows = append(rows, r, f)
		}
	}
	if !o.decode {
		return rows, nil
	}
	if _, err := model.Preset(o.decodePreset, decodeVocab); err != nil {
		return nil, errors.Wrap(err, "-decode-preset")
	}
	decode := row{Preset: o.decodePreset, Vocab: decodeVocab, Precision: prec, Device: dev}
	var decoding []row
	for _, b := range greedy {
		decode.Kind, decode.Batch = "greedy", b
		decoding = append(decoding, decode)
	}
	decode.Kind, decode.Batch = "beam4", 1
	decoding = append(decoding, decode)
	for _, r := range decoding {
		if err := r.checkMemory(); err != nil { // before any row is measured
			return nil, errors.Wrapf(err, "-decode-preset %s -decode-batches %s", o.decodePreset, o.decodeBatches)
		}
	}
	return append(rows, decoding...), nil
}

// parseShape parses -shape, batch x length.
func parseShape(s string) (batch, length int, err error) {
	b, l, ok := strings.Cut(s, "x")
	batch, err1 := strconv.Atoi(b)
	length, err2 := strconv.Atoi(l)
	if !ok || err1 != nil || err2 != nil || batch < 1 || batch > maxBatch || length < 2 {
		return 0, 0, errors.Errorf("-shape %q: want batch x length, such as 64x64 (batch 1 to %d, length 2 or more)", s, maxBatch)
	}
	return batch, length, nil
}

// checkLen checks that cfg's positions reach length.
func checkLen(cfg model.Config, length int) error {
	if length > cfg.MaxLen {
		return errors.Errorf("length %d is longer than the preset's max_len %d", length, cfg.MaxLen)
	}
	return nil
}

// table measures the rows and prints them.
func (o options) table(rows []row, stdout io.Writer) error {
	w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprint(w, "measure\tours tok/s\tours MB")
	if o.torch {
		fmt.Fprint(w, "\ttorch tok/s\ttorch MB\tratio")
	}
	fmt.Fprintln(w)
	for i := 0; i < len(rows); i++ {
		pair := rows[i : i+1]
		if rows[i].Kind == "train" { // train and forward come from one run
			pair = rows[i : i+2]
			i++
		}
		if err := o.measureRounds(pair); err != nil {
			return err
		}
		for _, r := range pair {
			r.print(w, o.torch)
		}
	}
	fmt.Fprintf(w, "(GOMAXPROCS %d; median of %d runs after %d warm-up, median of %d rounds; ratio = median of the rounds' ours / PyTorch)\n",
		runtime.GOMAXPROCS(0), o.runs, o.warmup, o.rounds)
	return w.Flush()
}

// print writes the row's line.
func (r row) print(w io.Writer, torch bool) {
	fmt.Fprintf(w, "%s\t%.0f\t%s", r.name(), r.Ours, mb(r.OursMB))
	if torch {
		fmt.Fprintf(w, "\t%.0f\t%s\t%.2f", r.Torch, mb(r.TorchMB), r.Ratio)
	}
	fmt.Fprintln(w)
}

// mb writes a peak RSS in MB, or "-" when unknown.
func mb(v float64) string {
	if v <= 0 {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// ints parses a comma-separated list of vocabulary sizes.
func ints(flag, what, s string, least, most int) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < least || v > most {
			return nil, errors.Errorf("%s %s: %s %q: want an integer from %d to %d", flag, s, what, f, least, most)
		}
		out = append(out, v)
	}
	return out, nil
}
