package layers

import (
	"math"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
)

// gqa is grouped-query attention on the test sizes (dModel 8, 4 heads of
// size 2) with the given key/value heads.
func gqa(kvHeads int, rotary bool) GroupedQueryAttention {
	return GroupedQueryAttention{DModel: 8, Heads: 4, KVHeads: kvHeads, Dropout: 0.1, Rotary: rotary}
}

func TestVariantGradients(t *testing.T) {
	tests := []gradCase{
		{"rotary", func(s *graph.Scope) *G.Node {
			return Rotary{DHead: 4}.Apply(s, s.Param("x", tensor.Shape{2, 3, 5, 4}, graph.Normal(1)))
		}},
		{"rotary at positions", func(s *graph.Scope) *G.Node {
			pos := intConstant(s, "pos", []int{4, 0, 2}, 3)
			return Rotary{DHead: 6, Base: 100}.At(s, s.Param("x", tensor.Shape{2, 3, 6}, graph.Normal(1)), pos, 5)
		}},
		{"swiglu", func(s *graph.Scope) *G.Node { return SwiGLU{DModel: 8, DFF: 12}.Apply(s, input(s, "x", 3)) }},
		{"grouped-query self-attention, causal, rotary", func(s *graph.Scope) *G.Node {
			x := input(s, "x", 3)
			return gqa(2, true).Apply(s, x, x, tgtMask(s), nil)
		}},
		{"alibi grouped-query self-attention, causal", func(s *graph.Scope) *G.Node {
			x := input(s, "x", 3)
			a := gqa(2, false)
			a.Bias = ALiBi{}
			return a.Apply(s, x, x, tgtMask(s), nil)
		}},
		{"alibi multi-head self-attention, padding", func(s *graph.Scope) *G.Node {
			x := input(s, "x", 4)
			a := gqa(4, false)
			a.Bias = ALiBi{}
			return a.Apply(s, x, x, srcMask(s), nil)
		}},
		{"multi-query cross-attention", func(s *graph.Scope) *G.Node {
			return gqa(1, false).Apply(s, input(s, "y", 3), input(s, "x", 4), srcMask(s), nil)
		}},
		{"grouped-query attention with as many key/value heads, no bias", func(s *graph.Scope) *G.Node {
			x := input(s, "x", 4)
			a := gqa(4, true)
			a.NoBias = true
			return a.Apply(s, x, x, srcMask(s), nil)
		}},
	}
	gradChecks(t, tests)
}

// TestRotaryRelativePositions: the product of a rotated query and key
// depends only on their distance.
func TestRotaryRelativePositions(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	q, k := make([]float64, 8), make([]float64, 8)
	for i := range q {
		q[i], k[i] = rng.NormFloat64(), rng.NormFloat64()
	}
	// Row i of qs is q at position i, row i of ks is k.
	var qs, ks []float64
	for range 6 {
		qs, ks = append(qs, q...), append(ks, k...)
	}
	out := runGraph(t, func(s *graph.Scope) map[string]*G.Node {
		r := Rotary{DHead: 8}
		rq := r.Apply(s, s.Constant("q", graph.FromFloat64s(tensor.Float64, qs, 6, 8)))
		rk := r.Apply(s, s.Constant("k", graph.FromFloat64s(tensor.Float64, ks, 6, 8)))
		return map[string]*G.Node{"dots": s.BatchedMatMul(rq, rk, false, true)}
	})
	dots := out["dots"] // [6, 6]: dots[i, j] = rot(q, i)·rot(k, j)
	for i := range 6 {
		for j := range 6 {
			if d := i - j; i > 0 && j > 0 {
				if diff := math.Abs(dots[i*6+j] - dots[(i-1)*6+j-1]); diff > 1e-12 {
					t.Fatalf("q at %d · k at %d = %g, at %d, %d = %g: not a function of %d alone", i, j, dots[i*6+j], i-1, j-1, dots[(i-1)*6+j-1], d)
				}
			}
		}
	}
	if math.Abs(dots[0]-dot(q, k)) > 1e-12 {
		t.Fatalf("position 0 is not the identity: %g, want %g", dots[0], dot(q, k))
	}
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func TestGroupedQuerySizeErrors(t *testing.T) {
	params, _ := graph.NewParams(tensor.Float32, rand.New(rand.NewPCG(1, 1)))
	s := graph.NewScope(params)
	x := input(s, "x", 3)
	GroupedQueryAttention{DModel: 8, Heads: 4, KVHeads: 3}.Apply(s, x, x, nil, nil)
	if s.Err() == nil {
		t.Fatal("4 heads in 3 key/value groups built without error")
	}
}

// TestALiBiSlopes checks the slopes of the paper: 2^(-8/n·(h+1)) for n a
// power of 2, and for 6 heads those of 4 then every other one of 8.
func TestALiBiSlopes(t *testing.T) {
	tests := []struct {
		heads int
		want  []float64
	}{
		{1, []float64{1.0 / 256}},
		{4, []float64{1.0 / 4, 1.0 / 16, 1.0 / 64, 1.0 / 256}},
		{6, []float64{1.0 / 4, 1.0 / 16, 1.0 / 64, 1.0 / 256, 1.0 / 2, 1.0 / 8}},
		{-4, []float64{1.0 / 2, 1.0 / 4, 1.0 / 8, 1.0 / 16}}, // MaxBias 4
	}
	for _, tc := range tests {
		a := ALiBi{}
		if tc.heads < 0 {
			tc.heads, a.MaxBias = -tc.heads, 4
		}
		got := a.slopes(tc.heads)
		if len(got) != len(tc.want) {
			t.Fatalf("%d heads: slopes %v, want %v", tc.heads, got, tc.want)
		}
		for i := range got {
			if math.Abs(got[i]-tc.want[i]) > 1e-15 {
				t.Errorf("%d heads: slopes %v, want %v", tc.heads, got, tc.want)
			}
		}
	}
}
