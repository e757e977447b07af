//go:build mpi

package main

import (
	"math"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"testing"

	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/internal/mpitest"
	"github.com/transformer-go/transformer/model"
	"github.com/transformer-go/transformer/model/checkpoint"
)

// tcp makes Open MPI talk over TCP on the loopback interface, the path
// between machines, instead of shared memory.
var tcp = []string{"--mca", "btl", "self,tcp", "--mca", "btl_tcp_if_include", "lo"}

// TestMPIMatchesOneProcess trains 20 steps alone and on 2 ranks (over shared
// memory and over TCP, with gradient accumulation, and resumed on 2 ranks
// from a run started alone), with the paper's warm-up: every run ends with
// the weights of the run alone, to a relative L2 distance of 1e-4, and its
// updates (final minus initial weights) within 1e-3 of the run alone's.
// What differs is float32 rounding (sums in another order), which Adam
// turns into full-size steps where a gradient is near zero; the arithmetic
// itself is checked exactly in float64 by trainer's TestShardedGradientsMatch.
func TestMPIMatchesOneProcess(t *testing.T) {
	bin := buildMPI(t)
	// No cooldown: the resumed run is extended from 10 steps to 20, which
	// would move it.
	args := func(out string, steps string) []string {
		return []string{"-steps", steps, "-max-tokens", "512", "-train-size", "2000", "-held-out", "32",
			"-eval-every", "10", "-accumulate", "2", "-warmup", "4000", "-cooldown", "0", "-out", out}
	}
	tmp := t.TempDir()
	alone := filepath.Join(tmp, "alone")
	if out, err := exec.Command(bin, args(alone, "20")...).CombinedOutput(); err != nil {
		t.Fatalf("alone: %v\n%s", err, out)
	}
	want, init := finalWeights(t, alone), initialWeights(t, alone)
	resumed := filepath.Join(tmp, "resumed")
	runs := []struct {
		name  string
		extra []string
		args  [][]string // one mpirun each
		out   string
	}{
		{"2 ranks, shared memory", nil, [][]string{args(filepath.Join(tmp, "np2"), "20")}, filepath.Join(tmp, "np2")},
		{"2 ranks, tcp", tcp, [][]string{args(filepath.Join(tmp, "tcp"), "20")}, filepath.Join(tmp, "tcp")},
		{"resumed on 2 ranks", nil, [][]string{args(resumed, "10"), {"-resume", resumed, "-steps", "20"}}, resumed},
	}
	for _, r := range runs {
		for i, a := range r.args {
			np := "2"
			if r.name == "resumed on 2 ranks" && i == 0 {
				np = "1"
			}
			if out, err := mpitest.Command(t, np, r.extra, bin, a...).CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", r.name, err, out)
			}
		}
		got := finalWeights(t, r.out)
		d, du := relativeL2(want, got, nil), relativeL2(want, got, init)
		if !(d <= 1e-4) || !(du <= 1e-3) {
			t.Errorf("%s: final weights at relative L2 distance %.3g from the run alone's (want ≤ 1e-4), updates at %.3g (want ≤ 1e-3)", r.name, d, du)
		}
		t.Logf("%s: weights at relative L2 distance %.3g, updates %.3g", r.name, d, du)
	}
}

// buildMPI builds the command with the mpi tag and returns its path.
func buildMPI(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "train")
	if out, err := exec.Command("go", "build", "-tags", "mpi", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build -tags mpi: %v\n%s", err, out)
	}
	return bin
}

// finalWeights reads a run's final weights.
func finalWeights(t *testing.T, dir string) *graph.Params {
	t.Helper()
	ck, err := checkpoint.Read(filepath.Join(dir, "final.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	_, params, err := ck.Model(tensor.Float64, nil)
	if err != nil {
		t.Fatal(err)
	}
	return params
}

// initialWeights are the weights a run of dir started from: its model,
// initialised from the default seed as cmd/train does.
func initialWeights(t *testing.T, dir string) *graph.Params {
	t.Helper()
	ck, err := checkpoint.Read(filepath.Join(dir, "final.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.New(ck.Config)
	if err != nil {
		t.Fatal(err)
	}
	params, err := model.NewParams(m, tensor.Float32, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	return params
}

// relativeL2 is ‖a − b‖ / ‖a − origin‖ over all parameters (origin nil: 0).
func relativeL2(a, b, origin *graph.Params) float64 {
	var diff, norm float64
	for _, name := range a.Names() {
		x, y := graph.Float64s(a.Value(name)), graph.Float64s(b.Value(name))
		var o []float64
		if origin != nil {
			o = graph.Float64s(origin.Value(name))
		}
		for i := range x {
			diff += (x[i] - y[i]) * (x[i] - y[i])
			if o != nil {
				norm += (x[i] - o[i]) * (x[i] - o[i])
			} else {
				norm += x[i] * x[i]
			}
		}
	}
	return math.Sqrt(diff / norm)
}
