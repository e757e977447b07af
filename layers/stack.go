package layers

import (
	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"

	"github.com/transformer-go/transformer/graph"
)

// Stack is the paper's encoder, or its decoder: N copies of Layer, each in
// its own scope ("layers.0", "layers.1", …), and, if FinalNorm is not nil,
// a norm ("norm") after the last. Pre-norm stacks need the final norm; the
// paper's post-norm ones do not have it. Under a causal mask a stack of
// encoder layers is a decoder-only model's.
type Stack struct {
	Layer     Layer
	N         int
	FinalNorm Norm
}

// Apply runs x [batch, len, dModel] (embedded, with positions) through the
// layers (Layer.Apply, with mask, memory and memMask), then the final
// norm. With caches, one per layer, x is one new position of incremental
// decoding.
func (st Stack) Apply(s *graph.Scope, x, mask, memory, memMask *G.Node, caches []LayerCache) *G.Node {
	if caches != nil && len(caches) != st.N {
		s.Fail(errors.Errorf("incremental step: %d caches for %d layers", len(caches), st.N))
		return nil
	}
	for i := range st.N {
		var c *LayerCache
		if caches != nil {
			c = &caches[i]
		}
		x = st.Layer.Apply(s.In("layers", i), x, mask, memory, memMask, c)
	}
	if st.FinalNorm == nil || s.Err() != nil {
		return x
	}
	return st.FinalNorm.Apply(s.In("norm"), x)
}

// Memory projects the encoder's output memory [batch, lenS, dModel] to
// every layer's cross-attention keys and values, [batch, heads, lenS, dk]
// each (Attention.Apply with an empty cache and no query): an incremental
// decoder computes them once per source, not at every step.
func (st Stack) Memory(s *graph.Scope, memory *G.Node) []Cache {
	cross := st.Layer.attention(st.Layer.CrossAttn)
	caches := make([]Cache, st.N)
	for i := range caches {
		cross.Apply(s.In("layers", i, "cross_attn"), nil, memory, nil, &caches[i])
	}
	return caches
}
