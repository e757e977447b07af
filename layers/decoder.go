package layers

import (
	G "gorgonia.org/gorgonia"

	"github.com/transformer-go/transformer/graph"
)

// DecoderLayer is one layer of the decoder (section 3.1): causal
// self-attention, attention over the encoder's output (cross-attention), then
// the feed-forward network, each wrapped by Residual. Parameters: self_attn,
// norm1, cross_attn, norm2, feed_forward, norm3.
type DecoderLayer struct{ Sizes }

// Apply maps y [batch, lenT, dModel] to the same shape, attending to memory
// [batch, lenS, dModel]. selfMask is CausalMask of the targets, memMask
// PaddingMask of the sources.
func (l DecoderLayer) Apply(s *graph.Scope, y, memory, selfMask, memMask *G.Node) *G.Node {
	if s.Err() != nil {
		return nil
	}
	y = l.residual(s).Apply(s.In("norm1"), y, func(h *G.Node) *G.Node {
		return l.attention().Apply(s.In("self_attn"), h, h, selfMask)
	})
	y = l.residual(s).Apply(s.In("norm2"), y, func(h *G.Node) *G.Node {
		return l.attention().Apply(s.In("cross_attn"), h, memory, memMask)
	})
	return l.residual(s).Apply(s.In("norm3"), y, func(h *G.Node) *G.Node {
		return NewFeedForward(l.DModel, l.DFF).Apply(s.In("feed_forward"), h)
	})
}

// Decoder is the paper's decoder: a Stack of DecoderLayers.
type Decoder struct {
	Layer DecoderLayer
	Stack
}

// Apply decodes y [batch, lenT, dModel] (embedded, with positions) against memory.
func (d Decoder) Apply(s *graph.Scope, y, memory, selfMask, memMask *G.Node) *G.Node {
	for i := range d.N {
		y = d.Layer.Apply(s.In("layers", i), y, memory, selfMask, memMask)
	}
	return d.finish(s, d.Layer.Sizes, y)
}
