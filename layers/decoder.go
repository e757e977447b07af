package layers

import (
	"github.com/pkg/errors"
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

// Step applies the layer to one new position y [batch, 1, dModel] of an
// incremental decoder, as Apply does to the last position of a sequence.
// Self-attention reads and extends cache, the keys and values of the
// earlier positions (MultiHeadAttention.Cached); cross-attention attends to
// memory, the encoder output's keys and values (Decoder.Memory). It returns
// the new position's output and the updated cache.
func (l DecoderLayer) Step(s *graph.Scope, y *G.Node, cache KV, at Slot, memory KV, memMask *G.Node) (*G.Node, KV) {
	if s.Err() != nil {
		return nil, cache
	}
	y = l.residual(s).Apply(s.In("norm1"), y, func(h *G.Node) *G.Node {
		var out *G.Node
		out, cache = l.attention().Cached(s.In("self_attn"), h, cache, at)
		return out
	})
	y = l.residual(s).Apply(s.In("norm2"), y, func(h *G.Node) *G.Node {
		return l.attention().Attend(s.In("cross_attn"), h, memory, memMask)
	})
	return l.residual(s).Apply(s.In("norm3"), y, func(h *G.Node) *G.Node {
		return NewFeedForward(l.DModel, l.DFF).Apply(s.In("feed_forward"), h)
	}), cache
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

// Memory projects the encoder's output memory [batch, lenS, dModel] to every
// layer's cross-attention keys and values, [batch, heads, lenS, dk] each:
// an incremental decoder computes them once per source, not at every step.
func (d Decoder) Memory(s *graph.Scope, memory *G.Node) []KV {
	kvs := make([]KV, d.N)
	for i := range d.N {
		kvs[i] = d.Layer.attention().Project(s.In("layers", i, "cross_attn"), memory)
	}
	return kvs
}

// Step decodes one new position y [batch, 1, dModel] (embedded, with its
// position) given each layer's self-attention cache and the Memory of the
// encoder's output. It returns the position's output and the updated caches.
func (d Decoder) Step(s *graph.Scope, y *G.Node, caches []KV, at Slot, memory []KV, memMask *G.Node) (*G.Node, []KV) {
	if len(caches) != d.N || len(memory) != d.N {
		s.Fail(errors.Errorf("decoder step: %d caches and %d memories for %d layers", len(caches), len(memory), d.N))
		return nil, nil
	}
	out := make([]KV, d.N)
	for i := range d.N {
		y, out[i] = d.Layer.Step(s.In("layers", i), y, caches[i], at, memory[i], memMask)
	}
	return d.finish(s, d.Layer.Sizes, y), out
}
