package graph_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"

	. "github.com/transformer-go/transformer/graph"
)

// TestDeviceInputGrad: on the simulated device, the gradients with respect
// to an input and to a node marked differentiable are the CPU's.
func TestDeviceInputGrad(t *testing.T) {
	x := make([]float32, 12)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	grads := func(rt *Runtime) [2][]float64 {
		params, _ := NewParams(tensor.Float32, rand.New(rand.NewPCG(1, 2)))
		s := NewScope(params, GradWRT("x", "u"))
		u := s.Differentiable("u", s.Tanh(s.Input("x", tensor.Float32, 3, 4)))
		y := s.MatMul(u, s.Param("w", tensor.Shape{2, 4}, Normal(1)), true)
		p, err := Compile(rt, s, s.Mean(s.Sum(s.Mul(y, y), 1, false), 0, false), nil)
		if err == nil {
			err = p.Set("x", x)
		}
		if err == nil {
			err = p.Run()
		}
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		return [2][]float64{Float64s(p.InputGrad("x")), Float64s(p.InputGrad("u"))}
	}
	want, got := grads(CPU()), grads(simRuntime(t, Float32))
	for k, name := range []string{"x", "u"} {
		if len(got[k]) != len(want[k]) {
			t.Fatalf("∂L/∂%s: %d values on the device, %d on the CPU", name, len(got[k]), len(want[k]))
		}
		for i, w := range want[k] {
			if math.Abs(got[k][i]-w) > 1e-5*(math.Abs(w)+1e-3) {
				t.Errorf("∂L/∂%s[%d] = %g on the device, %g on the CPU", name, i, got[k][i], w)
			}
		}
	}
}
