package graph

import (
	"fmt"
	"math"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// keyMask is an additive mask [2, 1, 1, 4] that hides the last key of the first
// sequence and the last two of the second.
func keyMask() *tensor.Dense {
	inf := math.Inf(-1)
	return tensor.New(tensor.WithShape(2, 1, 1, 4), tensor.WithBacking([]float64{0, 0, 0, inf, 0, 0, inf, inf}))
}

func TestOpGradients(t *testing.T) {
	ids := []int{3, 1, 4, 1, 5, 0}
	setIDs := func(p *Program) error { return p.Set("ids", ids) }
	x := func(s *Scope, shape ...int) *G.Node { return s.Param("x", shape, Normal(1)) }
	tests := []struct {
		name  string
		build func(s *Scope) *G.Node
		set   func(p *Program) error
		train bool
	}{
		{"softmax", func(s *Scope) *G.Node { return s.Softmax(x(s, 3, 5), nil, 1) }, nil, false},
		{"softmax scaled and masked", func(s *Scope) *G.Node {
			return s.Softmax(x(s, 2, 3, 2, 4), s.Constant("mask", keyMask()), 0.5)
		}, nil, false},
		{"log-softmax", func(s *Scope) *G.Node { return s.LogSoftmax(x(s, 2, 3, 7)) }, nil, false},
		{"layer norm", func(s *Scope) *G.Node {
			return s.LayerNorm(x(s, 3, 5), s.Param("g", tensor.Shape{5}, Normal(1)), s.Param("b", tensor.Shape{5}, Normal(1)), 1e-5)
		}, nil, false},
		{"matmul", func(s *Scope) *G.Node {
			return s.MatMul(x(s, 2, 3, 4), s.Param("w", tensor.Shape{4, 5}, XavierUniform), false)
		}, nil, false},
		{"affine", func(s *Scope) *G.Node {
			return s.Affine(x(s, 2, 3, 4), s.Param("w", tensor.Shape{4, 5}, Normal(1)), s.Param("b", tensor.Shape{5}, Normal(1)), false)
		}, nil, false},
		{"affine transposed", func(s *Scope) *G.Node {
			return s.Affine(x(s, 6, 4), s.Param("w", tensor.Shape{5, 4}, Normal(1)), s.Param("b", tensor.Shape{5}, Normal(1)), true)
		}, nil, false},
		{"affine relu", func(s *Scope) *G.Node {
			return s.AffineReLU(x(s, 2, 3, 4), s.Param("w", tensor.Shape{4, 5}, Normal(1)), s.Param("b", tensor.Shape{5}, Normal(1)), false)
		}, nil, false},
		{"affine relu transposed", func(s *Scope) *G.Node {
			return s.AffineReLU(x(s, 6, 4), s.Param("w", tensor.Shape{5, 4}, Normal(1)), s.Param("b", tensor.Shape{5}, Normal(1)), true)
		}, nil, false},
		{"matmul transposed", func(s *Scope) *G.Node {
			return s.MatMul(x(s, 2, 3, 4), s.Param("w", tensor.Shape{5, 4}, XavierUniform), true)
		}, nil, false},
		{"add bias", func(s *Scope) *G.Node { return s.AddBias(x(s, 2, 3, 4), s.Param("b", tensor.Shape{4}, Normal(1))) }, nil, false},
		{"layer norm", func(s *Scope) *G.Node {
			return s.Normalize(x(s, 2, 3, 6), s.Param("g", tensor.Shape{6}, Normal(1)), 1e-5, true)
		}, nil, false},
		{"rms norm", func(s *Scope) *G.Node {
			return s.Normalize(x(s, 4, 6), s.Param("g", tensor.Shape{6}, Normal(1)), 1e-6, false)
		}, nil, false},
		{"add and layer norm", func(s *Scope) *G.Node {
			r, g, b := s.Param("r", tensor.Shape{3, 5}, Normal(1)), s.Param("g", tensor.Shape{5}, Normal(1)), s.Param("b", tensor.Shape{5}, Normal(1))
			return s.AddLayerNorm(x(s, 3, 5), r, g, b, 1e-5)
		}, nil, false},
		{"add and rms norm", func(s *Scope) *G.Node {
			return s.AddNormalize(x(s, 2, 2, 6), s.Param("r", tensor.Shape{2, 2, 6}, Normal(1)), s.Param("g", tensor.Shape{6}, Normal(1)), 1e-6, false)
		}, nil, false},
		{"embed", func(s *Scope) *G.Node {
			return s.Embed(s.Param("w", tensor.Shape{6, 4}, Normal(1)), s.Input("ids", tensor.Int, 2, 3), 2)
		}, setIDs, false},
		{"dropout", func(s *Scope) *G.Node { return s.Dropout(x(s, 4, 8), 0.3) }, nil, true},
		{"relu", func(s *Scope) *G.Node { return s.ReLU(x(s, 3, 7)) }, nil, false},
		{"batched matmul 4-D, b transposed", func(s *Scope) *G.Node {
			return s.BatchedMatMul(x(s, 2, 3, 4, 5), s.Param("k", tensor.Shape{2, 3, 6, 5}, Normal(1)), false, true)
		}, nil, false},
		{"batched matmul 4-D", func(s *Scope) *G.Node {
			return s.BatchedMatMul(x(s, 2, 3, 4, 5), s.Param("v", tensor.Shape{2, 3, 5, 2}, Normal(1)), false, false)
		}, nil, false},
		{"batched matmul 3-D, a transposed", func(s *Scope) *G.Node {
			return s.BatchedMatMul(x(s, 2, 5, 4), s.Param("v", tensor.Shape{2, 5, 3}, Normal(1)), true, false)
		}, nil, false},
		{"batched matmul 3-D, both transposed", func(s *Scope) *G.Node {
			return s.BatchedMatMul(x(s, 2, 5, 4), s.Param("v", tensor.Shape{2, 3, 5}, Normal(1)), true, true)
		}, nil, false},
		{"add", func(s *Scope) *G.Node { return s.Add(x(s, 2, 3), s.Param("y", tensor.Shape{2, 3}, Normal(1))) }, nil, false},
	}
	// Each op is checked as it runs, then with its kernels split into parts
	// of one element spread over the goroutines.
	for _, grain := range []int{grainElems, 1} {
		for _, tc := range tests {
			t.Run(fmt.Sprintf("%s, parts of %d", tc.name, grain), func(t *testing.T) {
				defer SetGrain(SetGrain(grain))
				c := GradCheck{Build: tc.build, Set: tc.set, Train: tc.train, Seed: 7, Float32: true}
				if err := c.Run(); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// run builds a float32 evaluation graph with build, runs it, and returns the
// named outputs.
func run(t *testing.T, dt tensor.Dtype, build func(s *Scope) map[string]*G.Node) map[string]*tensor.Dense {
	t.Helper()
	params := newTestParams(t, dt)
	s := NewScope(params)
	outs := build(s)
	p, err := Compile(nil, s, nil, outs)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Run(); err != nil {
		t.Fatal(err)
	}
	res := map[string]*tensor.Dense{}
	for name := range outs {
		res[name] = p.Output(name)
	}
	return res
}

func TestSoftmaxRowsOfAnyRange(t *testing.T) {
	// Gorgonia's SoftMax takes one maximum for the whole tensor: this row gave NaN.
	out := run(t, tensor.Float32, func(s *Scope) map[string]*G.Node {
		x := s.Constant("x", tensor.New(tensor.WithShape(2, 3), tensor.WithBacking([]float32{0, 0, 0, 1000, 0, 0})))
		return map[string]*G.Node{"y": s.Softmax(x, nil, 1)}
	})
	want := []float32{1. / 3, 1. / 3, 1. / 3, 1, 0, 0}
	assertClose(t, "softmax", out["y"].Data().([]float32), want, 1e-6)
}

func TestSoftmaxFullyMaskedRow(t *testing.T) {
	inf := float32(math.Inf(-1))
	xs := tensor.New(tensor.WithShape(2, 3), tensor.WithBacking([]float32{1, 2, 3, 4, 5, 6}))
	mask := tensor.New(tensor.WithShape(2, 3), tensor.WithBacking([]float32{0, inf, 0, inf, inf, inf}))
	out := run(t, tensor.Float32, func(s *Scope) map[string]*G.Node {
		return map[string]*G.Node{"y": s.Softmax(s.Constant("x", xs), s.Constant("mask", mask), 1)}
	})
	e := math.Exp(2)
	want := []float32{float32(1 / (1 + e)), 0, float32(e / (1 + e)), 0, 0, 0}
	assertClose(t, "masked softmax", out["y"].Data().([]float32), want, 1e-6)

	// The fully masked row also passes no gradient back.
	grad := make([]float64, 6)
	y := []float64{0.2, 0, 0.8, 0, 0, 0}
	softmaxBackward(grad, y, []float64{1, 2, 3, 4, 5, 6}, 3, 1, false)
	for _, g := range grad[3:] {
		if g != 0 {
			t.Fatalf("gradient of a fully masked row = %v, want zeros", grad[3:])
		}
	}
}

func TestSoftmaxAndLogSoftmaxOfOneNode(t *testing.T) {
	// Gorgonia hashes its SoftMax and LogSoftMax alike: one graph holding both of
	// the same node got softmax twice.
	xs := tensor.New(tensor.WithShape(1, 3), tensor.WithBacking([]float64{1, 2, 3}))
	out := run(t, tensor.Float64, func(s *Scope) map[string]*G.Node {
		x := s.Constant("x", xs)
		return map[string]*G.Node{"p": s.Softmax(x, nil, 1), "logp": s.LogSoftmax(x)}
	})
	p, logp := out["p"].Data().([]float64), out["logp"].Data().([]float64)
	for i := range p {
		if math.Abs(math.Log(p[i])-logp[i]) > 1e-12 || logp[i] >= 0 {
			t.Fatalf("softmax %v and log-softmax %v of one node disagree", p, logp)
		}
	}
}

func TestLogSoftmaxVector(t *testing.T) {
	// Gorgonia's LogSumExp was wrong on 1-D input.
	xs := tensor.New(tensor.WithShape(4), tensor.WithBacking([]float64{1, -2, 3, 900}))
	out := run(t, tensor.Float64, func(s *Scope) map[string]*G.Node {
		return map[string]*G.Node{"y": s.LogSoftmax(s.Constant("x", xs))}
	})
	lse := 900 + math.Log(1+math.Exp(1-900)+math.Exp(-2-900)+math.Exp(3-900))
	want := []float64{1 - lse, -2 - lse, 3 - lse, 900 - lse}
	assertClose(t, "log-softmax", out["y"].Data().([]float64), want, 1e-12)
}

func TestDropoutScalesByKeepProbability(t *testing.T) {
	// Gorgonia's Dropout gradient scaled by 1/p instead of 1/(1-p).
	const p, n = 0.1, 20000
	params := newTestParams(t, tensor.Float64)
	rng := newTestRNG(3)
	s := NewScope(params, Training(rng))
	x := s.Param("x", tensor.Shape{n}, Ones)
	y := s.Dropout(x, p)
	loss := s.do(func() (*G.Node, error) { return G.Sum(y) }, y)
	prog, err := Compile(nil, s, loss, map[string]*G.Node{"y": y})
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	if err := prog.Run(); err != nil {
		t.Fatal(err)
	}
	out, grad := prog.Output("y").Data().([]float64), prog.Grad("x").Data().([]float64)
	dropped := 0
	for i, v := range out {
		switch {
		case v == 0:
			dropped++
		case math.Abs(v-1/(1-p)) > 1e-12:
			t.Fatalf("kept element %d = %g, want 1/(1-p) = %g", i, v, 1/(1-p))
		}
		if grad[i] != v {
			t.Fatalf("gradient %d = %g, want the mask value %g", i, grad[i], v)
		}
	}
	// The dropped fraction is Binomial(n, p)/n: within 5 standard deviations.
	if frac, sd := float64(dropped)/n, math.Sqrt(p*(1-p)/n); math.Abs(frac-p) > 5*sd {
		t.Fatalf("dropped %.4f of the elements, want %g", frac, p)
	}
}

func TestDropoutIsReproducible(t *testing.T) {
	masks := make([][]float64, 2)
	for i := range masks {
		params := newTestParams(t, tensor.Float64)
		s := NewScope(params, Training(newTestRNG(11)))
		y := s.Dropout(s.Param("x", tensor.Shape{64}, Ones), 0.5)
		prog, err := Compile(nil, s, nil, map[string]*G.Node{"y": y})
		if err != nil {
			t.Fatal(err)
		}
		if err := prog.Run(); err != nil {
			t.Fatal(err)
		}
		masks[i] = Float64s(prog.Output("y"))
	}
	assertClose(t, "dropout with one seed", masks[0], masks[1], 0)
}

func TestEvaluationGraphHasNoDropout(t *testing.T) {
	s := NewScope(newTestParams(t, tensor.Float64))
	x := s.Param("x", tensor.Shape{3}, Ones)
	if y := s.Dropout(x, 0.5); y != x {
		t.Fatal("dropout in an evaluation graph changed its input")
	}
}

func TestOpShapeErrors(t *testing.T) {
	s := NewScope(newTestParams(t, tensor.Float32))
	x := s.Param("x", tensor.Shape{2, 3}, Ones)
	tests := []struct {
		name string
		node func() (*G.Node, error)
	}{
		{"matmul inner sizes", func() (*G.Node, error) { return MatMul(x, s.Param("w", tensor.Shape{4, 5}, Ones), false) }},
		{"affine bias size", func() (*G.Node, error) {
			return Affine(x, s.Param("w2", tensor.Shape{3, 5}, Ones), s.Param("b2", tensor.Shape{4}, Ones), false)
		}},
		{"bias size", func() (*G.Node, error) { return AddBias(x, s.Param("b", tensor.Shape{4}, Ones)) }},
		{"gain size", func() (*G.Node, error) { return Normalize(x, s.Param("g", tensor.Shape{2}, Ones), 1e-5, true) }},
		{"mask broadcast", func() (*G.Node, error) { return Softmax(x, s.Param("m", tensor.Shape{2, 2}, Ones), 1) }},
		{"dropout probability", func() (*G.Node, error) { return Dropout(x, 1, newTestRNG(1), 1) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tc.node(); err == nil {
				t.Fatal("no error")
			}
		})
	}
}

func TestEmbedRejectsOutOfRangeIDs(t *testing.T) {
	s := NewScope(newTestParams(t, tensor.Float32))
	y := s.Embed(s.Param("w", tensor.Shape{5, 2}, Ones), s.Input("ids", tensor.Int, 3), 1)
	p, err := Compile(nil, s, nil, map[string]*G.Node{"y": y})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Set("ids", []int{1, 7, 2}); err != nil {
		t.Fatal(err)
	}
	if err := p.Run(); err == nil {
		t.Fatal("id 7 of a 5-token vocabulary ran without error")
	}
}

func assertClose[T Float](t *testing.T, what string, got, want []T, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if d := math.Abs(float64(got[i] - want[i])); !(d <= tol) {
			t.Fatalf("%s[%d] = %v, want %v (all: %v)", what, i, got[i], want[i], got)
		}
	}
}
