package graph

import (
	"math"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestMachineEngineAdd checks the machine's Add against Gorgonia's engine,
// bit for bit, in every way tensor.Add is called: in place, into a reused
// tensor, incrementing one, into a new tensor, and on views and float64,
// which it leaves to Gorgonia's engine.
func TestMachineEngineAdd(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	random := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		x[0], x[n-1] = float32(math.Inf(1)), float32(math.NaN())
		return x
	}
	dense := func(e tensor.Engine, data []float32, shape ...int) *tensor.Dense {
		return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(append([]float32(nil), data...)), tensor.WithEngine(e))
	}
	cases := []struct {
		name string
		opts func(a, reuse tensor.Tensor) []tensor.FuncOpt
	}{
		{"in place", func(tensor.Tensor, tensor.Tensor) []tensor.FuncOpt { return []tensor.FuncOpt{tensor.UseUnsafe()} }},
		{"reuse", func(_, r tensor.Tensor) []tensor.FuncOpt { return []tensor.FuncOpt{tensor.WithReuse(r)} }},
		{"incr", func(_, r tensor.Tensor) []tensor.FuncOpt { return []tensor.FuncOpt{tensor.WithIncr(r)} }},
		{"new", func(tensor.Tensor, tensor.Tensor) []tensor.FuncOpt { return nil }},
	}
	for _, n := range []int{1, 7, 8, 100, 70000} {
		xa, xb, xr := random(n), random(n), random(n)
		for _, c := range cases {
			var got, want []float32
			for i, e := range []tensor.Engine{machineEngine{}, G.StandardEngine{}} {
				a, b, r := dense(e, xa, n, 1), dense(e, xb, n, 1), dense(e, xr, n, 1)
				y, err := tensor.Add(a, b, c.opts(a, r)...)
				if err != nil {
					t.Fatalf("n %d, %s: %v", n, c.name, err)
				}
				if i == 0 {
					got = y.Data().([]float32)
				} else {
					want = y.Data().([]float32)
				}
			}
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("n %d, %s: element %d is %v, want %v", n, c.name, i, got[i], want[i])
				}
			}
		}
	}
}

// TestMachineEngineLeaves checks that the machine's Add leaves to Gorgonia's
// engine what it does not do itself: views, other types, mismatched shapes.
func TestMachineEngineLeaves(t *testing.T) {
	a := tensor.New(tensor.WithShape(4, 4), tensor.WithBacking(make([]float32, 16)), tensor.WithEngine(machineEngine{}))
	b := tensor.New(tensor.WithShape(4, 4), tensor.WithBacking(make([]float32, 16)))
	view, err := a.Slice(G.S(1, 3))
	if err != nil {
		t.Fatal(err)
	}
	c64 := tensor.New(tensor.WithShape(4, 4), tensor.WithBacking(make([]float64, 16)))
	wide := tensor.New(tensor.WithShape(2, 8), tensor.WithBacking(make([]float32, 16)))
	for _, tc := range []struct {
		name string
		a, b tensor.Tensor
	}{
		{"view", view, b},
		{"float64", c64, c64},
		{"other shape", a, wide},
	} {
		if _, ok := fastAdd(tc.a, tc.b, []tensor.FuncOpt{tensor.UseUnsafe()}); ok {
			t.Errorf("%s: fastAdd took it", tc.name)
		}
	}
}
