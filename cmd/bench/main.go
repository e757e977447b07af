// Command bench measures training and forward speed in target tokens per
// second at batch 32, source and target length 32, for presets and
// vocabulary sizes, and with -torch the same model sizes in PyTorch on the
// same machine, with their ratio.
//
//	go run ./cmd/bench -presets tiny,small -vocabs 1000,8000 -torch
//	CGO_LDFLAGS=-lopenblas go run -tags openblas ./cmd/bench -torch
//
// PyTorch comes from Debian's python3-torch through /usr/bin/python3. It is
// run with 2 OpenMP threads on the OpenMP build of OpenBLAS
// (libopenblas0-openmp): with the default pthread build it oversubscribes
// the cores and runs 2-3 times slower, which would flatter this project.
package main

import (
	_ "embed"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/model"
	"github.com/transformer-go/transformer/trainer"
)

//go:embed bench_torch.py
var torchScript []byte

// openblasOpenMP is where Debian's libopenblas0-openmp puts its BLAS.
const openblasOpenMP = "/usr/lib/x86_64-linux-gnu/openblas-openmp"

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "bench:", err)
		}
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	presets := fs.String("presets", "tiny,small", "comma-separated presets")
	vocabs := fs.String("vocabs", "1000,8000", "comma-separated vocabulary sizes")
	steps := fs.Int("steps", 5, "timed steps of each kind")
	torch := fs.Bool("torch", false, "also time PyTorch (/usr/bin/python3 with python3-torch)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	vs, err := ints(*vocabs)
	if err != nil {
		return err
	}
	if *steps < 1 || *steps > 1e6 {
		return errors.Errorf("-steps %d: want 1 to 1000000", *steps)
	}
	w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "preset\tvocab\ttrain tok/s\tforward tok/s\tMB/step")
	if *torch {
		fmt.Fprintf(w, "\ttorch train\ttorch fwd\ttrain ratio\tfwd ratio")
	}
	fmt.Fprintln(w)
	for _, preset := range strings.Split(*presets, ",") {
		for _, vocab := range vs {
			if err := row(w, preset, vocab, *steps, *torch); err != nil {
				return err
			}
		}
	}
	fmt.Fprintf(w, "(GOMAXPROCS %d; ratio = ours / PyTorch)\n", runtime.GOMAXPROCS(0))
	return w.Flush()
}

// row measures one preset and vocabulary size.
func row(w io.Writer, preset string, vocab, steps int, torch bool) error {
	cfg, err := model.Preset(preset, vocab)
	if err == nil {
		err = cfg.CheckMemory(true, 32*32)
	}
	if err != nil {
		return errors.Wrapf(err, "-presets %s -vocabs %d", preset, vocab)
	}
	rig, err := trainer.NewRig(cfg, model.Shape{Batch: 32, SrcLen: 32, TgtLen: 32})
	if err != nil {
		return err
	}
	s, err := rig.MeasureSpeed(steps)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s\t%d\t%.0f\t%.0f\t%.1f", preset, vocab, s.TrainTokensPerS, s.ForwardTokensPerS, s.TrainBytesPerStep/1e6)
	if torch {
		t, err := torchSpeed(cfg, preset, steps)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "\t%.0f\t%.0f\t%.2f\t%.2f", t.Train, t.Forward, s.TrainTokensPerS/t.Train, s.ForwardTokensPerS/t.Forward)
	}
	fmt.Fprintln(w)
	return nil
}

// torchResult is a line of bench_torch.py.
type torchResult struct {
	Train   float64 `json:"train_tokens_per_s"`
	Forward float64 `json:"forward_tokens_per_s"`
}

// torchSpeed runs bench_torch.py for the model of cfg.
func torchSpeed(cfg model.Config, preset string, steps int) (torchResult, error) {
	var r torchResult
	dir, err := os.MkdirTemp("", "bench")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "bench_torch.py")
	if err := os.WriteFile(script, torchScript, 0o644); err != nil {
		return r, err
	}
	args := []string{script}
	for _, v := range []int{cfg.DModel, cfg.Heads, cfg.DFF, cfg.EncoderLayers, cfg.Vocab} {
		args = append(args, strconv.Itoa(v))
	}
	cmd := exec.Command("/usr/bin/python3", append(args, preset, strconv.Itoa(steps))...)
	cmd.Env = append(os.Environ(), "OMP_NUM_THREADS="+strconv.Itoa(runtime.NumCPU()), "LD_LIBRARY_PATH="+openblasOpenMP)
	out, err := cmd.Output()
	if err != nil {
		return r, errors.Wrap(err, "running PyTorch (apt-get install python3-torch libopenblas0-openmp)")
	}
	return r, errors.Wrap(json.Unmarshal(out, &r), "reading PyTorch's timings")
}

// ints parses a comma-separated list of positive integers.
func ints(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v <= 4 {
			return nil, errors.Errorf("vocabulary size %q: want an integer above 4", f)
		}
		out = append(out, v)
	}
	return out, nil
}
