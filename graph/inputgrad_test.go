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

// inputGradProgram is loss = mean over rows of Σ tanh(u·Wᵀ)², u = 2x (marked
// differentiable as "u"), for an input x [3, 4], differentiated with
// respect to the names wrt.
func inputGradProgram(t *testing.T, wrt ...string) *graph.Program {
	t.Helper()
	params, _ := graph.NewParams(tensor.Float64, rand.New(rand.NewPCG(1, 2)))
	s := graph.NewScope(params, graph.GradWRT(wrt...))
	x := s.Input("x", tensor.Float64, 3, 4)
	s.Input("ids", tensor.Int, 3)
	u := s.Differentiable("u", s.Mul(x, s.Scalar(2)))
	y := s.Tanh(s.MatMul(u, s.Param("w", tensor.Shape{2, 4}, graph.Normal(1)), true))
	loss := s.Mean(s.Sum(s.Mul(y, y), 1, false), 0, false)
	p, err := graph.Compile(nil, s, loss, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestInputGrad checks the gradient with respect to an input against
// central finite differences, and the one with respect to a node marked
// differentiable (u = 2x) against the chain rule, ∂L/∂x = 2·∂L/∂u.
func TestInputGrad(t *testing.T) {
	p := inputGradProgram(t, "x", "u")
	defer p.Close()
	rng := rand.New(rand.NewPCG(3, 4))
	x := make([]float64, 12)
	for i := range x {
		x[i] = rng.NormFloat64() * 0.5
	}
	lossAt := func(x []float64) float64 {
		if err := p.Set("x", x); err != nil {
			t.Fatal(err)
		}
		if err := p.Run(); err != nil {
			t.Fatal(err)
		}
		return lossOf(t, p)
	}
	lossAt(x)
	if p.InputGrad("w") != nil || p.InputGrad("ids") != nil {
		t.Error("InputGrad of names not asked for")
	}
	gx, gu := graph.Float64s(p.InputGrad("x")), graph.Float64s(p.InputGrad("u"))
	if len(gx) != 12 || len(gu) != 12 || !p.InputGrad("x").Shape().Eq(tensor.Shape{3, 4}) {
		t.Fatalf("gradients of x and u: %v and %v", p.InputGrad("x"), p.InputGrad("u"))
	}
	const h = 1e-6
	for i := range x {
		xp, xm := append([]float64(nil), x...), append([]float64(nil), x...)
		xp[i] += h
		xm[i] -= h
		fd := (lossAt(xp) - lossAt(xm)) / (2 * h)
		if math.Abs(fd-gx[i]) > 1e-6*(1+math.Abs(fd)) {
			t.Errorf("∂L/∂x[%d] = %.10g, finite differences %.10g", i, gx[i], fd)
		}
		if math.Abs(gx[i]-2*gu[i]) > 1e-12*(1+math.Abs(gx[i])) {
			t.Errorf("∂L/∂x[%d] = %.10g, 2·∂L/∂u = %.10g", i, gx[i], 2*gu[i])
		}
	}
}

func TestGradWRTRefuses(t *testing.T) {
	for _, tc := range []struct {
		wrt  string
		want string
	}{
		{"nothing", "the graph has no input or differentiable node of that name"},
		{"ids", "it holds int, not the graph's floats"},
	} {
		params, _ := graph.NewParams(tensor.Float64, rand.New(rand.NewPCG(1, 2)))
		s := graph.NewScope(params, graph.GradWRT(tc.wrt))
		x := s.Input("x", tensor.Float64, 2)
		s.Input("ids", tensor.Int, 2)
		_, err := graph.Compile(nil, s, s.Sum(x, 0, false), nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("GradWRT(%q): %v, want an error saying %q", tc.wrt, err, tc.want)
		}
	}
	params, _ := graph.NewParams(tensor.Float64, rand.New(rand.NewPCG(1, 2)))
	s := graph.NewScope(params, graph.GradWRT("x"))
	x := s.Input("x", tensor.Float64, 2)
	if _, err := graph.Compile(nil, s, nil, map[string]*G.Node{"y": x}); err == nil || !strings.Contains(err.Error(), "need a loss") {
		t.Errorf("GradWRT without a loss: %v", err)
	}
}
