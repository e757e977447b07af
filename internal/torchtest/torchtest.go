// Package torchtest runs PyTorch reference computations for the parity
// tests. A case is a graph's parameters (its inputs among them), an optional
// attention mask and the projection R of the loss L = Σ out ⊙ R; a reference
// script names, for each case, the function that computes out in PyTorch,
// which gives out and the gradient of L with respect to every parameter.
package torchtest

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// Python is Debian's interpreter, which python3-torch installs into (another
// python3 may come first on PATH).
const Python = "/usr/bin/python3"

// Require skips t when PyTorch is missing, or fails it under CI=true.
func Require(t testing.TB) {
	t.Helper()
	if err := exec.Command(Python, "-c", "import torch").Run(); err != nil {
		msg := "PyTorch not found for " + Python + ": apt-get install python3-torch"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
}

// Tensor is a tensor as the reference scripts read it.
type Tensor struct {
	Shape []int     `json:"shape"`
	Data  []float64 `json:"data"`
}

// Case is one graph for PyTorch: the function Name of the reference
// script, the parameters, the mask (1 where a key is hidden; nil for none)
// and the projection R of the loss, as long as the output.
type Case struct {
	Name   string            `json:"name"`
	Params map[string]Tensor `json:"params"`
	Mask   *Tensor           `json:"mask"`
	Proj   []float64         `json:"proj"`
}

// Answer is a graph's output and the gradients of its loss, by parameter.
type Answer struct {
	Out   []float64            `json:"out"`
	Grads map[string][]float64 `json:"grads"`
}

// Run computes cases in float64 with the functions of the reference script
// (a Python file defining CASES, a dict from name to a function of the
// parameters and the mask) and returns PyTorch's answers. It calls Require
// first.
func Run(t testing.TB, script string, cases []Case) []Answer {
	t.Helper()
	Require(t)
	in, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	_, self, _, _ := runtime.Caller(0)
	cmd := exec.Command(Python, filepath.Join(filepath.Dir(self), "cases.py"), script)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, stderr.Bytes())
	}
	var answers []Answer
	if err := json.Unmarshal(out, &answers); err != nil {
		t.Fatalf("%s printed %.200q: %v", script, out, err)
	}
	if len(answers) != len(cases) {
		t.Fatalf("%s: %d answers for %d cases", script, len(answers), len(cases))
	}
	return answers
}

// Compare fails t unless ours agrees with PyTorch's answer for the case
// named what: the output to tol of its largest magnitude, each gradient to
// tol of its own largest magnitude or of a hundredth of the largest of all
// (a gradient that is zero in exact arithmetic is rounding noise in
// float32).
func Compare(t testing.TB, what string, ours, theirs Answer, tol float64) {
	t.Helper()
	agree(t, what+": output", ours.Out, theirs.Out, tol, 0)
	var all float64
	for _, g := range theirs.Grads {
		all = math.Max(all, maxAbs(g))
	}
	for name, g := range ours.Grads {
		agree(t, what+": gradient of "+name, g, theirs.Grads[name], tol, all/100)
	}
}

// agree fails t unless got and want agree to tol times want's largest
// magnitude, at least floor.
func agree(t testing.TB, what string, got, want []float64, tol, floor float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, PyTorch %d", what, len(got), len(want))
	}
	scale := math.Max(maxAbs(want), floor)
	for i := range got {
		if d := math.Abs(got[i] - want[i]); !(d <= tol*scale) {
			t.Fatalf("%s[%d] = %.12g, PyTorch %.12g (tolerance %.1e of %.3g)", what, i, got[i], want[i], tol, scale)
		}
	}
}

func maxAbs(v []float64) float64 {
	var m float64
	for _, x := range v {
		m = math.Max(m, math.Abs(x))
	}
	return m
}
