package graph

import (
	"math"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/internal/torchtest"
)

// torchTensor is a tensor as testdata/math_torch.py reads and writes it.
type torchTensor struct {
	Shape []int     `json:"shape"`
	Data  []float64 `json:"data"`
}

// torchCase is one of mathCases for PyTorch: its parameters and the
// projection R of the loss L = Σ out ⊙ R.
type torchCase struct {
	Name   string                 `json:"name"`
	Params map[string]torchTensor `json:"params"`
	Proj   []float64              `json:"proj"`
}

// torchAnswer is PyTorch's output and gradients of L for a case.
type torchAnswer struct {
	Out   []float64            `json:"out"`
	Grads map[string][]float64 `json:"grads"`
}

// TestMathMatchesTorch computes every case of mathCases in float64 here and
// in PyTorch (testdata/math_torch.py), outputs and gradients.
func TestMathMatchesTorch(t *testing.T) {
	var cases []torchCase
	var ours []torchAnswer
	for _, tc := range mathCases() {
		c, a := evalCase(t, tc.name, tc.build)
		cases, ours = append(cases, c), append(ours, a)
	}
	var theirs []torchAnswer
	torchtest.Run(t, "testdata/math_torch.py", cases, &theirs)
	if len(theirs) != len(cases) {
		t.Fatalf("%d answers for %d cases", len(theirs), len(cases))
	}
	for i, c := range cases {
		assertRelative(t, c.Name+": output", ours[i].Out, theirs[i].Out, 1e-12)
		for name, g := range ours[i].Grads {
			assertRelative(t, c.Name+": gradient of "+name, g, theirs[i].Grads[name], 1e-12)
		}
	}
}

// evalCase runs build in float64 and returns the case for PyTorch and our answer.
func evalCase(t *testing.T, name string, build func(s *Scope) *G.Node) (torchCase, torchAnswer) {
	t.Helper()
	params := newTestParams(t, tensor.Float64)
	s := NewScope(params)
	out := build(s)
	rng := rand.New(rand.NewPCG(4, 4))
	proj := make([]float64, out.Shape().TotalSize())
	for i := range proj {
		proj[i] = rng.NormFloat64()
	}
	r := s.Constant("proj", FromFloat64s(tensor.Float64, proj, out.Shape()...))
	loss := s.Sum(s.Reshape(s.Mul(out, r), -1), 0, false)
	p, err := Compile(s, loss, map[string]*G.Node{"out": out})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	defer p.Close()
	if err := p.Run(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	c := torchCase{Name: name, Params: map[string]torchTensor{}, Proj: proj}
	a := torchAnswer{Out: Float64s(p.Output("out")), Grads: map[string][]float64{}}
	for _, n := range params.Names() {
		c.Params[n] = torchTensor{Shape: params.Shape(n), Data: Float64s(params.Value(n))}
		a.Grads[n] = Float64s(p.Grad(n))
	}
	return c, a
}

// assertRelative fails t unless got and want agree to tol times want's
// largest magnitude.
func assertRelative(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	var scale float64
	for _, w := range want {
		scale = math.Max(scale, math.Abs(w))
	}
	for i := range got {
		if d := math.Abs(got[i] - want[i]); !(d <= tol*scale) {
			t.Fatalf("%s[%d] = %.15g, PyTorch %.15g", what, i, got[i], want[i])
		}
	}
}
