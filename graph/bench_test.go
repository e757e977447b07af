package graph

import (
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The op benchmarks time one run (forward and backward) of a float32 graph
// holding one op at the sizes of the small preset (batch 32, length 32,
// dModel 512, 8 heads, dFF 2048, vocabulary 8,000), reduced to a loss by a
// linear map (project) where the op's output is not a scalar.

// benchOp times build's graph, compiled with its gradients.
func benchOp(b *testing.B, train bool, build func(s *Scope) *G.Node) {
	params := newTestParamsB(b)
	var opts []Option
	if train {
		opts = append(opts, Training(newTestRNG(9)))
	}
	s := NewScope(params, opts...)
	loss := project(s, build(s))
	p, err := Compile(nil, s, loss, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	if err := p.Run(); err != nil { // the first run plans the memory
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := p.Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// project reduces out to a scalar, unless it is one, by a linear map whose
// gradient is dense and costs one pass: the sum of its elements.
func project(s *Scope, out *G.Node) *G.Node {
	if out == nil || out.IsScalar() {
		return out
	}
	return total(s, out)
}

func newTestParamsB(b *testing.B) *Params {
	p, err := NewParams(tensor.Float32, newTestRNG(1))
	if err != nil {
		b.Fatal(err)
	}
	return p
}

func BenchmarkOps(b *testing.B) {
	const batch, length, dModel, heads, dFF, vocab = 32, 32, 512, 8, 2048, 8000
	dk := dModel / heads
	x := func(s *Scope, shape ...int) *G.Node { return s.Param("x", shape, Normal(1)) }
	bench := []struct {
		name  string
		train bool
		build func(s *Scope) *G.Node
	}{
		{"matmul", false, func(s *Scope) *G.Node {
			return s.MatMul(x(s, batch, length, dModel), s.Param("w", tensor.Shape{dFF, dModel}, XavierUniform), true)
		}},
		{"add_bias", false, func(s *Scope) *G.Node {
			return s.AddBias(x(s, batch, length, dFF), s.Param("b", tensor.Shape{dFF}, Normal(1)))
		}},
		{"add", false, func(s *Scope) *G.Node {
			return s.Add(x(s, batch, length, dModel), s.Param("y", tensor.Shape{batch, length, dModel}, Normal(1)))
		}},
		{"relu", false, func(s *Scope) *G.Node { return s.ReLU(x(s, batch, length, dFF)) }},
		{"normalize", false, func(s *Scope) *G.Node {
			return s.Normalize(x(s, batch, length, dModel), s.Param("g", tensor.Shape{dModel}, Ones), 1e-5, true)
		}},
		{"batched_matmul", false, func(s *Scope) *G.Node {
			return s.BatchedMatMul(x(s, batch, heads, length, dk), s.Param("k", tensor.Shape{batch, heads, length, dk}, Normal(1)), false, true)
		}},
		{"softmax", false, func(s *Scope) *G.Node {
			mask := s.Constant("mask", tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(batch, 1, length, length)))
			return s.Softmax(x(s, batch, heads, length, length), mask, 0.125)
		}},
		{"log_softmax", false, func(s *Scope) *G.Node { return s.LogSoftmax(x(s, batch*length, vocab)) }},
		{"embed", false, func(s *Scope) *G.Node {
			return s.Embed(s.Param("w", tensor.Shape{vocab, dModel}, Normal(1)), s.Input("ids", tensor.Int, batch, length), 22.6)
		}},
		{"dropout", true, func(s *Scope) *G.Node { return s.Dropout(x(s, batch, length, dFF), 0.1) }},
		{"silu", false, func(s *Scope) *G.Node { return s.SiLU(x(s, batch, length, dFF)) }},
		{"gelu", false, func(s *Scope) *G.Node { return s.GELU(x(s, batch, length, dFF)) }},
		{"mul", false, func(s *Scope) *G.Node {
			return s.Mul(x(s, batch, length, dFF), s.Param("y", tensor.Shape{batch, length, dFF}, Normal(1)))
		}},
		{"mul_broadcast", false, func(s *Scope) *G.Node {
			return s.Mul(x(s, batch, length, dFF), s.Param("y", tensor.Shape{length, 1}, Normal(1)))
		}},
		{"transpose", false, func(s *Scope) *G.Node { return s.Transpose(x(s, batch, heads, length, dk), 0, 2, 1, 3) }},
		{"sum_axis", false, func(s *Scope) *G.Node { return s.Sum(x(s, batch, length, dModel), 1, false) }},
		{"batched_matmul_broadcast", false, func(s *Scope) *G.Node {
			return s.BatchedMatMul(x(s, batch, 2, heads/2*length, dk), s.Param("k", tensor.Shape{batch, 2, length, dk}, Normal(1)), false, true)
		}},
	}
	for _, bc := range bench {
		b.Run(bc.name, func(b *testing.B) { benchOp(b, bc.train, bc.build) })
	}
}
