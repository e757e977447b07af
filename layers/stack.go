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
// every layer's cross-attention cache (IncrementalAttention.Memory): an
// incremental decoder computes them once per batch of sources, not at
// every step.
func (st Stack) Memory(s *graph.Scope, memory *G.Node) []*Cache {
	cross, err := incremental(st.Layer.attention(st.Layer.CrossAttn))
	if err != nil {
		s.Fail(err)
		return nil
	}
	caches := make([]*Cache, st.N)
	for i := range caches {
		caches[i] = cross.Memory(s.In("layers", i, "cross_attn"), memory)
	}
	return caches
}

// Caches declares, in s (the stack's scope), every layer's caches at the
// decoding step at of rows rows: its self-attention's
// (IncrementalAttention.Cache), which c carries from step to step, and for
// a decoder layer i memory[i] (Memory's). An attention that does not
// decode incrementally fails s.
func (st Stack) Caches(s *graph.Scope, c Carrier, at *Slot, rows int, memory []*Cache) []LayerCache {
	self, err := incremental(st.Layer.attention(st.Layer.SelfAttn))
	if err == nil && st.Layer.Cross && len(memory) != st.N {
		err = errors.Errorf("incremental step: %d cross-attention caches for %d decoder layers", len(memory), st.N)
	}
	if err != nil {
		s.Fail(err)
		return nil
	}
	caches := make([]LayerCache, st.N)
	for i := range caches {
		caches[i].Self = self.Cache(s.In("layers", i, "self_attn"), c, at, rows)
		if st.Layer.Cross {
			caches[i].Cross = memory[i]
		}
	}
	return caches
}

// incremental is a as an IncrementalAttention, or the error that says why
// it cannot decode incrementally.
func incremental(a Attention) (IncrementalAttention, error) {
	inc, ok := a.(IncrementalAttention)
	if !ok {
		return nil, errors.Errorf("attention %T cannot decode incrementally: it is not a layers.IncrementalAttention", a)
	}
	return inc, nil
}
