package checkpoint

import (
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/graph/safetensors"
	"github.com/transformer-go/transformer/model"
)

// python is Debian's interpreter, which python3-torch installs into (another
// python3 may come first on PATH).
const python = "/usr/bin/python3"

// requireTorch skips the test when PyTorch is missing, or fails it under CI.
func requireTorch(t *testing.T) {
	t.Helper()
	if err := exec.Command(python, "-c", "import torch").Run(); err != nil {
		msg := "PyTorch not found for " + python + ": apt-get install python3-torch"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
}

// torchReference runs testdata/torch_parity.py into a temporary directory,
// for a post-norm model or, with norm "pre-norm", a pre-norm one.
func torchReference(t *testing.T, seed int, norm string) string {
	t.Helper()
	requireTorch(t)
	dir := t.TempDir()
	out, err := exec.Command(python, "testdata/torch_parity.py", dir, strconv.Itoa(seed), norm).CombinedOutput()
	if err != nil {
		t.Fatalf("torch_parity.py: %v\n%s", err, out)
	}
	return dir
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

func readIDs(t *testing.T, path string) [][]int {
	t.Helper()
	var seqs [][]int
	for _, line := range readLines(t, path) {
		var seq []int
		for _, f := range strings.Fields(line) {
			id, err := strconv.Atoi(f)
			if err != nil {
				t.Fatal(err)
			}
			seq = append(seq, id)
		}
		seqs = append(seqs, seq)
	}
	return seqs
}

// torchNorms are the two layouts torch_parity.py builds.
var torchNorms = []string{"post-norm", "pre-norm"}

func TestTorchParity(t *testing.T) {
	for i, seed := range []int{0, 1} {
		norm := torchNorms[i%2]
		dir := torchReference(t, seed, norm)
		cfg, params, err := ImportTorch(filepath.Join(dir, "model.safetensors"), 4, tensor.Float32)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.PreNorm != (norm == "pre-norm") {
			t.Fatalf("%s: imported PreNorm %t", norm, cfg.PreNorm)
		}
		m, err := model.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		// Batches of 5 rows: ragged lengths within each batch, and several shapes.
		got, err := model.ScorePairs(nil, m, params, readIDs(t, filepath.Join(dir, "src.txt")), readIDs(t, filepath.Join(dir, "tgt.txt")), 5)
		if err != nil {
			t.Fatal(err)
		}
		want := readLines(t, filepath.Join(dir, "expected.txt"))
		if len(got) != len(want) {
			t.Fatalf("%d scores, want %d", len(got), len(want))
		}
		worst := 0.0
		for i, w := range want {
			wv, _ := strconv.ParseFloat(w, 64)
			rel := math.Abs(got[i]-wv) / math.Abs(wv)
			worst = max(worst, rel)
			if !(rel < 1e-4) {
				t.Errorf("%s, seed %d, pair %d: score %.7g, PyTorch %.7g (relative difference %.1e)", norm, seed, i+1, got[i], wv, rel)
			}
		}
		t.Logf("%s, seed %d: %d pairs, largest relative difference %.1e", norm, seed, len(want), worst)
	}
}

// TestTorchGradients compares the label-smoothed training loss of a batch
// and its gradient with respect to every parameter with PyTorch's
// (F.cross_entropy with label_smoothing 0.1, in float64), post-norm and
// pre-norm: the loss to 1e-6 and each parameter's gradient to a relative L2
// distance of 1e-4 in float32, 1e-9 in float64 (see floor below).
func TestTorchGradients(t *testing.T) {
	for _, norm := range torchNorms {
		dir := torchReference(t, 3, norm)
		lossText := readLines(t, filepath.Join(dir, "loss.txt"))[0]
		wantLoss, err := strconv.ParseFloat(lossText, 64)
		if err != nil {
			t.Fatal(err)
		}
		grads, err := safetensors.Read(filepath.Join(dir, "grads.safetensors"))
		if err != nil {
			t.Fatal(err)
		}
		b := torchBatch(readIDs(t, filepath.Join(dir, "src.txt")), readIDs(t, filepath.Join(dir, "tgt.txt")))
		for _, tc := range []struct {
			dt  tensor.Dtype
			tol float64
		}{{tensor.Float32, 1e-4}, {tensor.Float64, 1e-9}} {
			cfg, params, err := ImportTorch(filepath.Join(dir, "model.safetensors"), 4, tc.dt)
			if err != nil {
				t.Fatal(err)
			}
			cfg.LabelSmoothing = 0.1
			m, err := model.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			want, err := model.NewParams(m, tensor.Float64, rand.New(rand.NewPCG(0, 0)))
			if err == nil {
				err = copyTorch(grads, want) // PyTorch's gradients under our names, q, k, v split
			}
			if err != nil {
				t.Fatal(err)
			}
			p, err := model.CompileTrain(nil, m, params, b.Shape, rand.New(rand.NewPCG(1, 1)))
			if err == nil {
				err = m.Feed(p, b)
			}
			if err == nil {
				err = p.Run()
			}
			if err != nil {
				t.Fatal(err)
			}
			loss, err := p.Loss()
			if err != nil {
				t.Fatal(err)
			}
			if d := math.Abs(loss-wantLoss) / wantLoss; !(d < max(tc.tol, 1e-6)) {
				t.Errorf("%s, %v: loss %.10g, PyTorch %.10g", norm, tc.dt, loss, wantLoss)
			}
			// The key projections' biases have a true gradient of zero (a
			// bias b on every key adds the same q·b to a row's scores, which
			// the softmax ignores), so both sides give rounding noise: each
			// distance is relative to at least 1e-3 of the whole gradient's norm.
			var whole float64
			for _, name := range params.Names() {
				whole += sumSquares(graph.Float64s(want.Value(name)))
			}
			floor := 1e-3 * math.Sqrt(whole)
			worst := 0.0
			for _, name := range params.Names() {
				d := distance(graph.Float64s(p.Grad(name)), graph.Float64s(want.Value(name)), floor)
				worst = max(worst, d)
				if !(d <= tc.tol) {
					t.Errorf("%s, %v: gradient of %s at relative L2 distance %.2g from PyTorch's", norm, tc.dt, name, d)
				}
			}
			t.Logf("%s, %v: %d gradients, largest relative L2 distance %.1e", norm, tc.dt, len(params.Names()), worst)
		}
	}
}

// torchBatch pads the pairs into one batch: sources, targets without their
// last token as decoder inputs, and without their first as outputs.
func torchBatch(srcs, tgts [][]int) model.Batch {
	b := model.Batch{Shape: model.Shape{Batch: len(srcs)}}
	for i := range srcs {
		b.SrcLen, b.TgtLen = max(b.SrcLen, len(srcs[i])), max(b.TgtLen, len(tgts[i])-1)
	}
	b.Src, b.TgtIn, b.TgtOut = make([]int, b.Batch*b.SrcLen), make([]int, b.Batch*b.TgtLen), make([]int, b.Batch*b.TgtLen)
	for i := range srcs {
		copy(b.Src[i*b.SrcLen:], srcs[i])
		copy(b.TgtIn[i*b.TgtLen:], tgts[i][:len(tgts[i])-1])
		copy(b.TgtOut[i*b.TgtLen:], tgts[i][1:])
	}
	return b
}

// distance is |got - want| / max(|want|, floor) in the L2 norm.
func distance(got, want []float64, floor float64) float64 {
	var diff float64
	for i := range want {
		diff += (got[i] - want[i]) * (got[i] - want[i])
	}
	return math.Sqrt(diff) / max(math.Sqrt(sumSquares(want)), floor)
}

func sumSquares(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v * v
	}
	return s
}
