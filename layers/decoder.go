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
//
// SelfAttn, CrossAttn, FFN and Norm are its sublayers; each left nil is the
// paper's (MultiHeadAttention, FeedForward, LayerNorm of the Sizes).
type DecoderLayer struct {
	Sizes
	SelfAttn  Attention
	CrossAttn Attention
	FFN       FFN
	Norm      Norm
}

// Apply maps y [batch, lenT, dModel] to the same shape, attending to memory
// [batch, lenS, dModel]. selfMask is CausalMask of the targets, memMask
// PaddingMask of the sources.
func (l DecoderLayer) Apply(s *graph.Scope, y, memory, selfMask, memMask *G.Node) *G.Node {
	if s.Err() != nil {
		return nil
	}
	self, cross := l.attentionOr(l.SelfAttn), l.attentionOr(l.CrossAttn)
	r := l.residual(l.normOr(l.Norm))
	y = r.Apply(s.In("norm1"), y, func(h *G.Node) *G.Node {
		return self.Apply(s.In("self_attn"), h, h, selfMask)
	})
	y = r.Apply(s.In("norm2"), y, func(h *G.Node) *G.Node {
		return cross.Apply(s.In("cross_attn"), h, memory, memMask)
	})
	return l.feedForward(s, "norm3", l.FFN, l.Norm, y)
}

// Step applies the layer to one new position y [batch, 1, dModel] of an
// incremental decoder, as Apply does to the last position of a sequence.
// Self-attention reads and extends cache, the keys and values of the
// earlier positions (IncrementalAttention.Cached); cross-attention attends
// to memory, the encoder output's keys and values (Decoder.Memory). It
// returns the new position's output and the updated cache.
func (l DecoderLayer) Step(s *graph.Scope, y *G.Node, cache KV, at Slot, memory KV, memMask *G.Node) (*G.Node, KV) {
	self, err := incremental(l.attentionOr(l.SelfAttn))
	cross, errCross := incremental(l.attentionOr(l.CrossAttn))
	if err == nil {
		err = errCross
	}
	if err != nil || s.Err() != nil {
		s.Fail(err)
		return nil, cache
	}
	r := l.residual(l.normOr(l.Norm))
	y = r.Apply(s.In("norm1"), y, func(h *G.Node) *G.Node {
		var out *G.Node
		out, cache = self.Cached(s.In("self_attn"), h, cache, at)
		return out
	})
	y = r.Apply(s.In("norm2"), y, func(h *G.Node) *G.Node {
		return cross.Attend(s.In("cross_attn"), h, memory, memMask)
	})
	return l.feedForward(s, "norm3", l.FFN, l.Norm, y), cache
}

// CacheDims are the heads and the size dk of each head of the layer's
// self-attention cache, [batch, heads, maxLen, dk]. The error says why the
// layer cannot decode incrementally.
func (l DecoderLayer) CacheDims() (heads, dk int, err error) {
	return cacheDims(l.attentionOr(l.SelfAttn))
}

// MemoryDims are the heads and the size dk of each head of the keys and
// values the layer's cross-attention makes of the encoder's output
// (Decoder.Memory), [batch, heads, lenS, dk].
func (l DecoderLayer) MemoryDims() (heads, dk int, err error) {
	return cacheDims(l.attentionOr(l.CrossAttn))
}

// Decoder is the paper's decoder: a Stack of DecoderLayers.
type Decoder struct {
	Layer DecoderLayer
	Stack
}

// Apply decodes y [batch, lenT, dModel] (embedded, with positions) against memory.
func (d Decoder) Apply(s *graph.Scope, y, memory, selfMask, memMask *G.Node) *G.Node {
	return d.Stack.Apply(s, y, func(s *graph.Scope, y *G.Node) *G.Node {
		return d.Layer.Apply(s, y, memory, selfMask, memMask)
	})
}

// Memory projects the encoder's output memory [batch, lenS, dModel] to every
// layer's cross-attention keys and values, [batch, heads, lenS, dk] each:
// an incremental decoder computes them once per source, not at every step.
func (d Decoder) Memory(s *graph.Scope, memory *G.Node) []KV {
	cross, err := incremental(d.Layer.attentionOr(d.Layer.CrossAttn))
	if err != nil {
		s.Fail(err)
		return nil
	}
	kvs := make([]KV, d.N)
	for i := range d.N {
		kvs[i] = cross.Project(s.In("layers", i, "cross_attn"), memory)
	}
	return kvs
}

// Step decodes one new position y [batch, 1, dModel] (embedded, with its
// position) given each layer's self-attention cache and the Memory of the
// encoder's output. It returns the position's output and the updated caches.
func (d Decoder) Step(s *graph.Scope, y *G.Node, caches []KV, at Slot, memory []KV, memMask *G.Node) (*G.Node, []KV) {
	if len(memory) != d.N {
		s.Fail(errors.Errorf("decoder step: %d memories for %d layers", len(memory), d.N))
		return nil, nil
	}
	return d.step(s, y, caches, func(s *graph.Scope, i int, y *G.Node, cache KV) (*G.Node, KV) {
		return d.Layer.Step(s, y, cache, at, memory[i], memMask)
	})
}
