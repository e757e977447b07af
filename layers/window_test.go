package layers

import (
	"fmt"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"

	"github.com/transformer-go/transformer/graph"
)

// windowLayer is a layer of sliding-window attention of the given window,
// built through the registry as a config names it.
func windowLayer(t *testing.T, window float64, cross bool) Layer {
	t.Helper()
	z := sizes
	z.Dropout, z.AttnDropout, z.PreNorm = 0, 0, true
	z.Options = map[string]float64{OptionWindow: window}
	l, err := NewRegistry().Layer(z, Variants{Attention: AttentionSlidingWindow, FFN: FFNReLU, Norm: NormLayer, Positions: PositionsSinusoid}, cross)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestSlidingWindowRegistered checks the variant's setting, its default
// and its check, and that it places no positions: it goes beside positions
// added to the embeddings.
func TestSlidingWindowRegistered(t *testing.T) {
	l := windowLayer(t, 3, true)
	self, cross := l.SelfAttn.(MultiHeadAttention), l.CrossAttn.(MultiHeadAttention)
	byDefault, _ := NewRegistry().Attention.New(AttentionSlidingWindow, sizes)
	if self.Bias != (SlidingWindow{Window: 3}) || cross.Bias != nil || self.PlacesPositions() || windowOption.Check(2.5) == nil ||
		byDefault.(MultiHeadAttention).Bias != (SlidingWindow{Window: 256}) {
		t.Errorf("self-attention %v (places positions: %t), cross-attention %v, by default %v: want a window of 3 that places none, none, 256; 2.5 refused",
			self.Bias, self.PlacesPositions(), cross.Bias, byDefault.(MultiHeadAttention).Bias)
	}
}

// TestSlidingWindowMasks checks the weights of causal sliding-window
// attention: a query sees itself and the window of keys behind it, and
// nothing farther.
func TestSlidingWindowMasks(t *testing.T) {
	const n, window = 5, 2
	out := runGraph(t, func(s *graph.Scope) map[string]*G.Node {
		x := randomConstant(s, "x", rand.New(rand.NewPCG(1, 2)), 2, n, sizes.DModel)
		windowLayer(t, window, false).SelfAttn.Apply(s.In("attn"), x, x, tgtMaskOf(s, n), nil)
		return map[string]*G.Node{"weights": s.Kept()["attn.weights"]}
	})
	w := out["weights"] // [2, heads, n, n]
	for r := range 2 * sizes.Heads {
		for i := range n {
			for j := range n {
				seen := j <= i && i-j <= window
				if got := w[(r*n+i)*n+j]; seen != (got > 0) {
					t.Fatalf("row %d, query %d, key %d: weight %g, want one %s", r, i, j, got, map[bool]string{true: "above 0", false: "of 0"}[seen])
				}
			}
		}
	}
}

// TestSlidingWindowTrainsAndDecodes checks the gradients of
// sliding-window attention, and that decoding one position at a time
// against the caches gives what the stacks give the whole sequence: a
// decoder-only stack and a decoder, whose cross-attention sees every
// source position.
func TestSlidingWindowTrainsAndDecodes(t *testing.T) {
	gradChecks(t, []gradCase{{"sliding window of 1, causal", func(s *graph.Scope) *G.Node {
		x := input(s, "x", 3)
		return MultiHeadAttention{DModel: 8, Heads: 2, KVHeads: 1, Bias: SlidingWindow{Window: 1}}.Apply(s, x, x, tgtMask(s), nil)
	}}})
	for _, cross := range []bool{false, true} {
		l := windowLayer(t, 1, cross)
		t.Run(fmt.Sprintf("cross-attention %t", cross), func(t *testing.T) { assertStepsMatchApply(t, Stack{Layer: l, N: 2, FinalNorm: l.Norm}) })
	}
}
