package graph

import (
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/internal/torchtest"
)

// TestMathMatchesTorch computes every case of mathCases in float64 here and
// in PyTorch (testdata/math_torch.py), outputs and gradients.
func TestMathMatchesTorch(t *testing.T) {
	var cases []torchtest.Case
	var ours []torchtest.Answer
	for _, tc := range mathCases() {
		c, a := evalCase(t, tc.name, tc.build)
		cases, ours = append(cases, c), append(ours, a)
	}
	theirs := torchtest.Run(t, "testdata/math_torch.py", cases)
	for i, c := range cases {
		torchtest.Compare(t, c.Name, ours[i], theirs[i], 1e-12)
	}
}

// evalCase runs build in float64 and returns the case for PyTorch and our answer.
func evalCase(t *testing.T, name string, build func(s *Scope) *G.Node) (torchtest.Case, torchtest.Answer) {
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
	p, err := Compile(nil, s, loss, map[string]*G.Node{"out": out})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	defer p.Close()
	if err := p.Run(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	c := torchtest.Case{Name: name, Params: map[string]torchtest.Tensor{}, Proj: proj}
	a := torchtest.Answer{Out: Float64s(p.Output("out")), Grads: map[string][]float64{}}
	for _, n := range params.Names() {
		c.Params[n] = torchtest.Tensor{Shape: params.Shape(n), Data: Float64s(params.Value(n))}
		a.Grads[n] = Float64s(p.Grad(n))
	}
	return c, a
}
