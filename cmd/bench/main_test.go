package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/internal/longtest"
)

// TestMain lets the test binary stand in for the command when a test
// measures in a child process (-child).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "-child" {
		if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestBenchPrintsATable(t *testing.T) {
	var out, errb bytes.Buffer
	if err := run([]string{"-presets", "tiny", "-vocabs", "50", "-warmup", "0", "-runs", "1", "-rounds", "1"}, &out, &errb); err != nil {
		t.Fatal(err, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []string{"measure", "train, tiny V50", "forward, tiny V50", "greedy batch 1, tiny V8000",
		"greedy batch 32, tiny V8000", "beam4 batch 1, tiny V8000", "(GOMAXPROCS"}
	if len(lines) != len(want) {
		t.Fatalf("table:\n%s", out.String())
	}
	for i, w := range want {
		f := strings.Fields(strings.TrimPrefix(lines[i], w))
		if !strings.HasPrefix(lines[i], w) || i > 0 && i < len(want)-1 && (len(f) != 2 || f[0] == "0" || f[1] == "-") {
			t.Errorf("line %q, want %q with a speed and a peak RSS", lines[i], w)
		}
	}
}

func TestBenchRefuses(t *testing.T) {
	for _, args := range [][]string{
		{"-vocabs", "x"},
		{"-vocabs", "20000000"},
		{"-runs", "0"},
		{"-rounds", "0"},
		{"-presets", "huge"},
		{"-precision", "fp16"},
	} {
		var out, errb bytes.Buffer
		if err := run(args, &out, &errb); err == nil {
			t.Errorf("%v ran", args)
		}
	}
}

// TestDecodingRowsCheckDecoding: a decoding row of a model that cannot
// fit is refused for its decoding, named as such, not for training.
func TestDecodingRowsCheckDecoding(t *testing.T) {
	_, err := parseChild(`[{"kind":"greedy","preset":"big","vocab":16000000,"batch":32}]`)
	if err == nil || !strings.Contains(err.Error(), "model too large: decoding with the big preset and vocabulary 16000000") ||
		strings.Contains(err.Error(), "training") {
		t.Errorf("a greedy row of 16 billion parameters: %v", err)
	}
	_, err = parseChild(`[{"kind":"train","preset":"big","vocab":16000000,"batch":32,"len":32},{"kind":"forward","preset":"big","vocab":16000000,"batch":32,"len":32}]`)
	if err == nil || !strings.Contains(err.Error(), "training on batches of 1024 tokens") {
		t.Errorf("a train row of 16 billion parameters: %v", err)
	}
}

// TestBenchBesidePyTorch runs the PyTorch side too: every row gets PyTorch's
// speed, peak RSS and the ratio; in float32, and with bf16 products, where
// PyTorch runs under autocast. Each row starts a Python with PyTorch
// (seconds each), so by default it takes one round of float32 and one
// batch of greedy decoding; longtest.Full takes two rounds, both
// precisions and both batches.
func TestBenchBesidePyTorch(t *testing.T) {
	_, blas := os.Stat(openblasOpenMP)
	if err := exec.Command("/usr/bin/python3", "-c", "import torch").Run(); err != nil || blas != nil {
		msg := "PyTorch or OpenMP OpenBLAS not found for /usr/bin/python3: apt-get install python3-torch libopenblas0-openmp"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	precisions, rounds, batches := []string{"float32"}, "1", "1"
	if longtest.Full() {
		precisions, rounds, batches = []string{"float32", "bf16"}, "2", "1,32"
	}
	for _, prec := range precisions {
		var out, errb bytes.Buffer
		if err := run([]string{"-presets", "tiny", "-vocabs", "50", "-warmup", "0", "-runs", "1", "-rounds", rounds, "-decode-batches", batches,
			"-torch", "-precision", prec}, &out, &errb); err != nil {
			t.Fatal(err, errb.String())
		}
		checkTorchTable(t, prec, out.String())
	}
}

// checkTorchTable checks a table of -torch with products of precision prec.
func checkTorchTable(t *testing.T, prec, out string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if prec != "float32" && !strings.HasPrefix(lines[1], "train "+prec+",") {
		t.Errorf("line %q does not name the precision %s", lines[1], prec)
	}
	for _, line := range lines[1 : len(lines)-1] {
		f := strings.Fields(line[strings.Index(line, "V"):])
		if len(f) != 6 {
			t.Fatalf("line %q: want ours and PyTorch's speed and RSS and a ratio", line)
		}
		if r, err := strconv.ParseFloat(f[5], 64); err != nil || !(r > 0) {
			t.Errorf("line %q: ratio %q", line, f[5])
		}
	}
}

// TestBenchScaling prints one line per training row with both speeds and
// the ratio, and refuses to compare one core with itself.
func TestBenchScaling(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	var out, errb bytes.Buffer
	if err := run([]string{"-scaling", "-presets", "tiny", "-vocabs", "50,60", "-warmup", "0", "-runs", "1"}, &out, &errb); err != nil {
		t.Fatal(err, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "train, tiny V50: ") || !strings.HasPrefix(lines[1], "train, tiny V60: ") {
		t.Fatalf("scaling:\n%s", out.String())
	}
	for _, line := range lines {
		var one, many, ratio float64
		var procs int
		if _, err := fmt.Sscanf(line[strings.Index(line, ": ")+2:], "%f tok/s on 1 core, %f on %d: %fx", &one, &many, &procs, &ratio); err != nil ||
			!(one > 0 && many > 0) || procs != 2 || math.Abs(ratio-many/one) > 0.01*ratio {
			t.Errorf("line %q: want both speeds, 2 cores and their ratio (%v)", line, err)
		}
	}
	runtime.GOMAXPROCS(1)
	if err := run([]string{"-scaling", "-presets", "tiny", "-vocabs", "50", "-runs", "1"}, &out, &errb); err == nil || !strings.Contains(err.Error(), "GOMAXPROCS of 2 or more") {
		t.Errorf("-scaling at GOMAXPROCS 1: %v", err)
	}
}

// TestBenchBF16Speedup prints one line per training row with the speeds
// of both precisions and their ratio, and refuses to run beside -scaling.
func TestBenchBF16Speedup(t *testing.T) {
	var out, errb bytes.Buffer
	if err := run([]string{"-bf16-speedup", "-presets", "tiny", "-vocabs", "50", "-warmup", "0", "-runs", "3"}, &out, &errb); err != nil {
		t.Fatal(err, errb.String())
	}
	line := strings.TrimSpace(out.String())
	var f32, bf16, ratio float64
	rest, ok := strings.CutPrefix(line, "train, tiny V50: ")
	rest = strings.Replace(rest, " ("+graph.BF16Kernel()+")", "", 1)
	if _, err := fmt.Sscanf(rest, "%f tok/s in float32, %f with bf16 products: %fx", &f32, &bf16, &ratio); !ok || err != nil ||
		!(f32 > 0 && bf16 > 0 && ratio > 0) || !strings.Contains(line, graph.BF16Kernel()) {
		t.Errorf("line %q: want both speeds, the kernel and their ratio (%v)", line, err)
	}
	if err := run([]string{"-bf16-speedup", "-scaling"}, &out, &errb); err == nil || !strings.Contains(err.Error(), "choose one") {
		t.Errorf("-bf16-speedup -scaling: %v", err)
	}
}

// FuzzParseChild parses -child specs: an error or rows that are checked,
// never a panic.
func FuzzParseChild(f *testing.F) {
	for _, s := range []string{`[{"kind":"train","preset":"tiny","vocab":1000},{"kind":"forward","preset":"tiny","vocab":1000}]`,
		`[{"kind":"greedy","preset":"tiny","vocab":8000,"batch":32}]`, `[{"kind":"train","preset":"tiny","vocab":1000000000000}]`, `[]`, `{`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		rows, err := parseChild(spec)
		if err == nil && (len(rows) == 0 || len(rows) > 2) {
			t.Fatalf("%q: %d rows without an error", spec, len(rows))
		}
	})
}
