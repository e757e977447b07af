package graph_test

import (
	"math"
	"testing"

	"gorgonia.org/tensor"

	. "github.com/transformer-go/transformer/graph"
)

// TestDeviceGradSums: on the simulated device, gradient sums of two runs
// (3·∇ + (-0.5)·∇) are 2.5 times the CPU's gradients, their sum of squares
// and the program's own are the CPU's (a weight larger than the sum's grid,
// so that its threads stride), and values set from the host come back.
func TestDeviceGradSums(t *testing.T) {
	dev := simRuntime(t, Float32)
	names := []string{"w", "b"}
	var grads [][]float64
	for _, rt := range []*Runtime{CPU(), dev} {
		params := NewTestParams(t, tensor.Float32)
		s := NewScope(params)
		w := s.Param("w", tensor.Shape{70, 61}, Normal(1))
		b := s.Param("b", tensor.Shape{1, 61}, Normal(1))
		loss := s.Sum(s.Sum(s.Mul(s.Tanh(w), s.Exp(b)), 1, false), 0, false)
		p, err := Compile(rt, s, loss, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		if err := p.Run(); err != nil {
			t.Fatal(err)
		}
		if rt == dev {
			testGradSums(t, dev, params, p, names, grads)
			continue
		}
		for _, name := range names {
			grads = append(grads, Float64s(p.Grad(name)))
		}
	}
}

// testGradSums checks sums of p's gradients against want, the CPU's
// gradients of names.
func testGradSums(t *testing.T, rt *Runtime, params *Params, p *Program, names []string, want [][]float64) {
	sums, err := rt.NewGradSums(params, names)
	if err != nil {
		t.Fatal(err)
	}
	defer sums.Close()
	for _, scale := range []float64{3, -0.5} {
		if err := sums.Add(p, scale); err != nil {
			t.Fatal(err)
		}
	}
	var flat []float64
	for _, g := range want {
		flat = append(flat, g...)
	}
	host, err := sums.AppendHost(nil)
	if err != nil {
		t.Fatal(err)
	}
	got := host.([]float32)
	var sq, d, w float64
	for i, g := range flat {
		sq += g * g
		d += (float64(got[i]) - 2.5*g) * (float64(got[i]) - 2.5*g)
		w += 2.5 * g * 2.5 * g
	}
	if math.Sqrt(d) > 1e-5*math.Sqrt(w) {
		t.Errorf("sums of 3·∇ and -0.5·∇: relative L2 distance %.3g from 2.5·∇ on the CPU", math.Sqrt(d/w))
	}
	own, err := p.SumSquares()
	checkNear(t, "the program's Σ g²", own, sq, err)
	total, err := sums.SumSquares()
	checkNear(t, "the sums' Σ g²", total, 6.25*sq, err)
	for i := range got {
		got[i] *= 2
	}
	if err := sums.SetHost(got); err != nil {
		t.Fatal(err)
	}
	total, err = sums.SumSquares()
	checkNear(t, "the sums' Σ g² after SetHost of twice them", total, 25*sq, err)
}

// checkNear fails t unless err is nil and got is within 1e-5 relative of want.
func checkNear(t *testing.T, what string, got, want float64, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if math.Abs(got-want) > 1e-5*math.Abs(want) {
		t.Errorf("%s = %v, want %v (CPU)", what, got, want)
	}
}
