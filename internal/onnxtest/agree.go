package onnxtest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/graph/onnx"
)

// Case is a graph whose ONNX export ONNX Runtime must agree with. Build
// adds it to s and returns its output; it declares its inputs with
// s.Input as Inputs holds them (float inputs as float64 tensors, converted
// to the graph's type; int inputs as int tensors), and its parameters with
// s.Param, which draws them from a seeded generator.
type Case struct {
	Name   string
	Inputs map[string]*tensor.Dense
	Build  func(s *graph.Scope) *G.Node
	// Float32Only runs the case in float32 alone, for an op whose ONNX
	// operators ONNX Runtime runs in float alone (Erf).
	Float32Only bool
}

// Agree runs each case's graph here and its ONNX export in ONNX Runtime,
// in float32 and (unless Float32Only) in float64 (with ONNX Runtime's basic optimizations: see
// Job), and fails t unless ONNX's checker accepts
// every file and the outputs agree: infinities alike, other elements
// within tol relative (to 1 for those below 1 in magnitude) in float32, and
// 1e-9 in float64.
func Agree(t *testing.T, tol float64, cases ...Case) {
	t.Helper()
	Require(t)
	var jobs []Job
	var ours []*tensor.Dense
	var paths, names []string
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		for i, c := range cases {
			if c.Float32Only && dt == tensor.Float64 {
				continue
			}
			path := filepath.Join(t.TempDir(), fmt.Sprintf("%d.onnx", i))
			y, in := runCase(t, c, dt, path)
			jobs = append(jobs, Job{Model: path, Inputs: in, Basic: dt == tensor.Float64})
			ours, paths, names = append(ours, y), append(paths, path), append(names, fmt.Sprintf("%s (%v)", c.Name, dt))
		}
	}
	Check(t, paths...)
	for i, out := range Run(t, jobs...) {
		want := tol
		if ours[i].Dtype() == tensor.Float64 {
			want = 1e-9
		}
		if err := Close(out["y"], ours[i], want); err != nil {
			t.Errorf("%s: ONNX Runtime's output against ours: %v", names[i], err)
		}
	}
}

// runCase builds c in the float type dt, runs it here and writes its ONNX
// export to path: it returns its output and its inputs as ONNX Runtime
// takes them.
func runCase(t *testing.T, c Case, dt tensor.Dtype, path string) (*tensor.Dense, map[string]*tensor.Dense) {
	t.Helper()
	params, err := graph.NewParams(dt, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	s := graph.NewScope(params)
	y := c.Build(s)
	outputs := map[string]*G.Node{"y": y}
	p, err := graph.Compile(nil, s, nil, outputs)
	if err != nil {
		t.Fatalf("%s: %v", c.Name, err)
	}
	defer p.Close()
	in := map[string]*tensor.Dense{}
	for name, v := range c.Inputs {
		if v.Dtype() == tensor.Float64 {
			v = graph.FromFloat64s(dt, graph.Float64s(v), v.Shape()...)
		}
		if err := p.Set(name, v.Data()); err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		in[name] = v
	}
	if err := p.Run(); err != nil {
		t.Fatalf("%s: %v", c.Name, err)
	}
	b, err := onnx.Export(s, outputs, onnx.Options{Name: c.Name})
	if err != nil {
		t.Fatalf("%s: %v", c.Name, err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p.Output("y").Clone().(*tensor.Dense), in
}

// Normal is a float64 tensor of the given shape of standard normal values
// drawn from seed: a float input of a Case.
func Normal(seed uint64, shape ...int) *tensor.Dense {
	rng := rand.New(rand.NewPCG(seed, 7))
	v := make([]float64, tensor.Shape(shape).TotalSize())
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	return graph.FromFloat64s(tensor.Float64, v, shape...)
}

// Close says how got differs from want: in shape, or in an element by
// more than tol relative (to 1 below 1 in magnitude), infinities and NaN
// alike; nil if it does not.
func Close(got, want *tensor.Dense, tol float64) error {
	switch {
	case got == nil:
		return fmt.Errorf("no output")
	case got.Shape().TotalSize() != want.Shape().TotalSize():
		return fmt.Errorf("shape %v, want %v", got.Shape(), want.Shape())
	}
	g, w := floats(got), floats(want)
	for i := range w {
		if e := RelErr(g[i], w[i]); !(e <= tol) {
			return fmt.Errorf("element %d is %g, want %g (relative error %.3g, want at most %g)", i, g[i], w[i], e, tol)
		}
	}
	return nil
}

// RelErr is |got - want| relative to max(|want|, 1), 0 when both are the
// same infinity or both NaN, +Inf when only one is.
func RelErr(got, want float64) float64 {
	switch {
	case got == want || math.IsNaN(got) && math.IsNaN(want):
		return 0
	case math.IsInf(got, 0) || math.IsInf(want, 0) || math.IsNaN(got) || math.IsNaN(want):
		return math.Inf(1)
	}
	return math.Abs(got-want) / max(math.Abs(want), 1)
}

// floats is t's elements as float64s, ints included.
func floats(t *tensor.Dense) []float64 {
	if ints, ok := t.Data().([]int); ok {
		f := make([]float64, len(ints))
		for i, v := range ints {
			f[i] = float64(v)
		}
		return f
	}
	return graph.Float64s(t)
}
