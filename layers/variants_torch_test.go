package layers

import (
	"math"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/internal/torchtest"
)

// hidden is mask [b, 1, q, k] as 1 where a key is hidden, for PyTorch.
func hidden(mask *tensor.Dense) *torchtest.Tensor {
	h := torchtest.Tensor{Shape: mask.Shape().Clone()}
	for _, v := range graph.Float64s(mask) {
		var hide float64
		if math.IsInf(v, -1) {
			hide = 1
		}
		h.Data = append(h.Data, hide)
	}
	return &h
}

// variantCases are the graphs compared with PyTorch, with the mask each uses.
func variantCases() []struct {
	name  string
	mask  *tensor.Dense
	build func(s *graph.Scope) *G.Node
} {
	causal := CausalMask(tensor.Float64, tgtIDs, 2, 3, 0)
	padding := PaddingMask(tensor.Float64, srcIDs, 2, 4, 0)
	return []struct {
		name  string
		mask  *tensor.Dense
		build func(s *graph.Scope) *G.Node
	}{
		{"rotary", nil, func(s *graph.Scope) *G.Node {
			return Rotary{DHead: 4}.Apply(s, s.Param("x", tensor.Shape{2, 3, 5, 4}, graph.Normal(1)))
		}},
		{"rotary at positions, base 100", nil, func(s *graph.Scope) *G.Node {
			pos := intConstant(s, "pos", []int{4, 0, 2}, 3)
			return Rotary{DHead: 6, Base: 100}.At(s, s.Param("x", tensor.Shape{2, 3, 6}, graph.Normal(1)), pos, 5)
		}},
		{"swiglu", nil, func(s *graph.Scope) *G.Node { return SwiGLU{DModel: 8, DFF: 12}.Apply(s, input(s, "x", 3)) }},
		{"grouped-query self-attention, causal, rotary", causal, func(s *graph.Scope) *G.Node {
			x := input(s, "x", 3)
			return gqa(2, true).Apply(s, x, x, s.Constant("mask", causal), nil)
		}},
		{"multi-query cross-attention", padding, func(s *graph.Scope) *G.Node {
			return gqa(1, false).Apply(s, input(s, "y", 3), input(s, "x", 4), s.Constant("mask", padding), nil)
		}},
		{"alibi grouped-query self-attention, causal", causal, func(s *graph.Scope) *G.Node {
			x := input(s, "x", 3)
			a := gqa(2, false)
			a.Bias = ALiBi{}
			return a.Apply(s, x, x, s.Constant("mask", causal), nil)
		}},
		{"alibi multi-head self-attention, padding", padding, func(s *graph.Scope) *G.Node {
			x := input(s, "x", 4)
			a := gqa(4, false)
			a.Bias = ALiBi{}
			return a.Apply(s, x, x, s.Constant("mask", padding), nil)
		}},
		{"multi-head as grouped-query, rotary, no bias", padding, func(s *graph.Scope) *G.Node {
			x := input(s, "x", 4)
			a := gqa(4, true)
			a.NoBias = true
			return a.Apply(s, x, x, s.Constant("mask", padding), nil)
		}},
	}
}

// TestVariantsMatchTorch compares the outputs and gradients (inputs and
// parameters) of each variant with PyTorch's (testdata/variants_torch.py):
// to 1e-10 in float64 and 1e-4 in float32, of each tensor's largest
// magnitude.
func TestVariantsMatchTorch(t *testing.T) {
	var cases []torchtest.Case
	var ours64, ours32 []torchtest.Answer
	for _, tc := range variantCases() {
		params, a64 := evalVariant(t, tc.build, tensor.Float64, nil)
		_, a32 := evalVariant(t, tc.build, tensor.Float32, params)
		c := torchtest.Case{Name: tc.name, Params: map[string]torchtest.Tensor{}, Proj: projection(len(a64.Out))}
		for _, n := range params.Names() {
			c.Params[n] = torchtest.Tensor{Shape: params.Shape(n), Data: graph.Float64s(params.Value(n))}
		}
		if tc.mask != nil {
			c.Mask = hidden(tc.mask)
		}
		cases, ours64, ours32 = append(cases, c), append(ours64, a64), append(ours32, a32)
	}
	theirs := torchtest.Run(t, "testdata/variants_torch.py", cases)
	for i, c := range cases {
		torchtest.Compare(t, c.Name+" (float64)", ours64[i], theirs[i], 1e-10)
		torchtest.Compare(t, c.Name+" (float32)", ours32[i], theirs[i], 1e-4)
	}
}

// projection is the fixed R of the loss L = Σ out ⊙ R, n elements.
func projection(n int) []float64 {
	rng := rand.New(rand.NewPCG(9, 9))
	r := make([]float64, n)
	for i := range r {
		r[i] = rng.NormFloat64()
	}
	return r
}

// evalVariant builds build in type dt, with the parameter values of values
// if not nil, and returns its parameters, output and gradients of L.
func evalVariant(t *testing.T, build func(s *graph.Scope) *G.Node, dt tensor.Dtype, values *graph.Params) (*graph.Params, torchtest.Answer) {
	t.Helper()
	params, _ := graph.NewParams(dt, rand.New(rand.NewPCG(1, 1)))
	s := graph.NewScope(params)
	out := build(s)
	if values != nil {
		for _, n := range values.Names() {
			if err := params.Set(n, values.Value(n)); err != nil {
				t.Fatal(err)
			}
		}
	}
	r := s.Constant("proj", graph.FromFloat64s(dt, projection(out.Shape().TotalSize()), out.Shape()...))
	loss := s.Sum(s.Reshape(s.Mul(out, r), -1), 0, false)
	p, err := graph.Compile(nil, s, loss, map[string]*G.Node{"out": out})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Run(); err != nil {
		t.Fatal(err)
	}
	a := torchtest.Answer{Out: graph.Float64s(p.Output("out")), Grads: map[string][]float64{}}
	for _, n := range p.ParamNames() {
		a.Grads[n] = graph.Float64s(p.Grad(n))
	}
	return params, a
}
