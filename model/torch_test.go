package model

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gorgonia.org/tensor"
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

// torchReference runs testdata/torch_parity.py into a temporary directory.
func torchReference(t *testing.T, seed int) string {
	t.Helper()
	requireTorch(t)
	dir := t.TempDir()
	out, err := exec.Command(python, "testdata/torch_parity.py", dir, strconv.Itoa(seed)).CombinedOutput()
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

func TestTorchParity(t *testing.T) {
	for _, seed := range []int{0, 1} {
		dir := torchReference(t, seed)
		cfg, params, err := ImportTorch(filepath.Join(dir, "model.safetensors"), 4, tensor.Float32)
		if err != nil {
			t.Fatal(err)
		}
		m, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		// Batches of 5 rows: ragged lengths within each batch, and several shapes.
		got, err := ScorePairs(m, params, readIDs(t, filepath.Join(dir, "src.txt")), readIDs(t, filepath.Join(dir, "tgt.txt")), 5)
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
				t.Errorf("seed %d, pair %d: score %.7g, PyTorch %.7g (relative difference %.1e)", seed, i+1, got[i], wv, rel)
			}
		}
		t.Logf("seed %d: %d pairs, largest relative difference %.1e", seed, len(want), worst)
	}
}
