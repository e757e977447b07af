package ops

import (
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
)

// BenchmarkOps times one run (forward and backward) of a float32 graph
// holding one op at the sizes of the small preset (batch 32, length 32,
// dModel 512, 8 heads, vocabulary 8,000), as graph's BenchmarkOps does.
// An output that is not a scalar is reduced to a loss by a linear map whose
// gradient is dense and costs one pass: the label-smoothed cross-entropy of
// the output taken as log-probabilities against targets 0, or the sum of
// its elements (sum).
func BenchmarkOps(b *testing.B) {
	const batch, length, dModel, heads, vocab = 32, 32, 512, 8, 8000
	x := func(s *graph.Scope, shape ...int) *G.Node { return s.Param("x", shape, graph.Normal(1)) }
	bench := []struct {
		name  string
		build func(s *graph.Scope) *G.Node
	}{
		{"split_heads", func(s *graph.Scope) *G.Node {
			h := SplitHeads(s, x(s, batch, length, dModel), heads)
			return SmoothedCrossEntropy(s, h, s.Input("projection_targets", tensor.Int, batch, heads, length), 0.5, -1)
		}},
		{"cross_entropy_logits", func(s *graph.Scope) *G.Node {
			return SmoothedCrossEntropyLogits(s, x(s, batch, length, vocab), s.Input("targets", tensor.Int, batch, length), 0.1, -1)
		}},
		{"head_scores", func(s *graph.Scope) *G.Node {
			return sum(s, HeadScores(s, x(s, batch, length, dModel), s.Param("k", tensor.Shape{batch, length, dModel}, graph.Normal(1)), heads))
		}},
		{"head_mix", func(s *graph.Scope) *G.Node {
			return sum(s, HeadMix(s, x(s, batch, heads, length, length), s.Param("v", tensor.Shape{batch, length, dModel}, graph.Normal(1)), heads))
		}},
	}
	for _, bc := range bench {
		b.Run(bc.name, func(b *testing.B) { benchLoss(b, bc.build) })
	}
}

// sum is the sum of y's elements, a loss whose gradient is dense and costs
// one pass, as graph's benchmarks reduce an op's output.
func sum(s *graph.Scope, y *G.Node) *G.Node {
	return s.Sum(s.Reshape(y, y.Shape().TotalSize()), 0, false)
}

// benchLoss times the graph whose loss build returns, compiled with its
// gradients.
func benchLoss(b *testing.B, build func(s *graph.Scope) *G.Node) {
	params, err := graph.NewParams(tensor.Float32, rand.New(rand.NewPCG(1, 0)))
	if err != nil {
		b.Fatal(err)
	}
	s := graph.NewScope(params)
	p, err := graph.Compile(nil, s, build(s), nil)
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
