package graph_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
)

func TestEval(t *testing.T) {
	params, _ := graph.NewParams(tensor.Float32, rand.New(rand.NewPCG(1, 2)))
	var w *tensor.Dense
	v, err := graph.Eval(params, func(s *graph.Scope) *G.Node {
		x := s.Constant("x", tensor.New(tensor.WithShape(1, 3), tensor.WithBacking([]float64{1, -2, 3})))
		n := s.Param("w", tensor.Shape{2, 3}, graph.Normal(1))
		w = params.Value("w")
		return s.MatMul(x, n, true)
	})
	if err != nil {
		t.Fatal(err)
	}
	wd := w.Data().([]float32)
	want := []float32{wd[0] - 2*wd[1] + 3*wd[2], wd[3] - 2*wd[4] + 3*wd[5]}
	if got := v.Data().([]float32); !v.Shape().Eq(tensor.Shape{1, 2}) || math.Abs(float64(got[0]-want[0])) > 1e-5 || math.Abs(float64(got[1]-want[1])) > 1e-5 {
		t.Errorf("x·Wᵀ = %v %v, want %v", v.Shape(), got, want)
	}
	scalar, err := graph.Eval(nil, func(s *graph.Scope) *G.Node {
		return s.Mean(s.Scalar(3), 0, false)
	})
	if err != nil || scalar.Dims() != 0 || scalar.Data() != 3.0 {
		t.Errorf("a scalar: %v, %v", scalar, err)
	}
	if _, err := graph.Eval(nil, func(s *graph.Scope) *G.Node { return nil }); err == nil || !strings.Contains(err.Error(), "no node") {
		t.Errorf("a builder returning nil: %v", err)
	}
	if _, err := graph.Eval(nil, func(s *graph.Scope) *G.Node {
		return s.MatMul(s.Scalar(1), s.Constant("m", tensor.New(tensor.WithShape(2, 3), tensor.WithBacking(make([]float64, 6)))), false)
	}); err == nil {
		t.Error("a graph that fails to build: no error")
	}
}
