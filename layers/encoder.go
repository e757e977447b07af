package layers

import (
	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"

	"github.com/transformer-go/transformer/graph"
)

// Sizes holds what every encoder and decoder layer is made of, and what a
// Registry's constructors build sublayers from.
type Sizes struct {
	DModel, Heads, DFF int
	// Dropout applies to each sublayer's output before the residual sum;
	// AttnDropout to the attention weights.
	Dropout, AttnDropout float64
	// Eps is the norms' epsilon.
	Eps float64
	// PreNorm normalizes each sublayer's input instead of the residual sum.
	PreNorm bool
	// MaxLen bounds the length of every sequence: learned positions have
	// that many rows.
	MaxLen int
	// KVHeads is the number of key/value heads of grouped-query attention
	// (a divisor of Heads; 0 means Heads).
	KVHeads int
}

// kvHeads is KVHeads, or Heads when it is 0.
func (z Sizes) kvHeads() int {
	if z.KVHeads == 0 {
		return z.Heads
	}
	return z.KVHeads
}

// residual is the residual wrapper of these sizes around the norm n.
func (z Sizes) residual(n Norm) Residual {
	return Residual{Norm: n, Dropout: z.Dropout, PreNorm: z.PreNorm}
}

// attentionOr is a, or the paper's multi-head attention if a is nil.
func (z Sizes) attentionOr(a Attention) Attention {
	if a != nil {
		return a
	}
	return NewMultiHeadAttention(z.DModel, z.Heads, z.AttnDropout)
}

// ffnOr is f, or the paper's feed-forward network if f is nil.
func (z Sizes) ffnOr(f FFN) FFN {
	if f != nil {
		return f
	}
	return NewFeedForward(z.DModel, z.DFF)
}

// normOr is n, or the paper's layer norm if n is nil.
func (z Sizes) normOr(n Norm) Norm {
	if n != nil {
		return n
	}
	return LayerNorm{DModel: z.DModel, Eps: z.Eps}
}

// EncoderLayer is one layer of the encoder (section 3.1): self-attention, then
// the feed-forward network, each wrapped by Residual. Parameters: self_attn,
// norm1, feed_forward, norm2.
//
// SelfAttn, FFN and Norm are its sublayers; each left nil is the paper's
// (MultiHeadAttention, FeedForward, LayerNorm of the Sizes), so
// EncoderLayer{Sizes: z} is the paper's layer and setting FFN swaps the
// feed-forward network alone. With a causal mask it is also the layer of a
// decoder-only (GPT-style) model, which Step runs incrementally.
type EncoderLayer struct {
	Sizes
	SelfAttn Attention
	FFN      FFN
	Norm     Norm
}

// Apply maps x [batch, len, dModel] to the same shape; mask is the additive
// self-attention mask (PaddingMask, or CausalMask for a decoder-only model).
func (l EncoderLayer) Apply(s *graph.Scope, x, mask *G.Node) *G.Node {
	if s.Err() != nil {
		return nil
	}
	attn := l.attentionOr(l.SelfAttn)
	x = l.residual(l.normOr(l.Norm)).Apply(s.In("norm1"), x, func(h *G.Node) *G.Node {
		return attn.Apply(s.In("self_attn"), h, h, mask)
	})
	return l.feedForward(s, "norm2", l.FFN, l.Norm, x)
}

// feedForward applies the residual feed-forward sublayer f (or the paper's)
// with the norm n (or the paper's), whose parameters go under normName.
func (z Sizes) feedForward(s *graph.Scope, normName string, f FFN, n Norm, x *G.Node) *G.Node {
	f = z.ffnOr(f)
	return z.residual(z.normOr(n)).Apply(s.In(normName), x, func(h *G.Node) *G.Node {
		return f.Apply(s.In("feed_forward"), h)
	})
}

// Step applies the layer to one new position x [batch, 1, dModel] of an
// incremental decoder-only model, as Apply under a causal mask does to the
// last position of a sequence: self-attention reads and extends cache, the
// keys and values of the earlier positions (IncrementalAttention.Cached).
// It returns the new position's output and the updated cache.
func (l EncoderLayer) Step(s *graph.Scope, x *G.Node, cache KV, at Slot) (*G.Node, KV) {
	attn, err := incremental(l.attentionOr(l.SelfAttn))
	if err != nil || s.Err() != nil {
		s.Fail(err)
		return nil, cache
	}
	x = l.residual(l.normOr(l.Norm)).Apply(s.In("norm1"), x, func(h *G.Node) *G.Node {
		var out *G.Node
		out, cache = attn.Cached(s.In("self_attn"), h, cache, at)
		return out
	})
	return l.feedForward(s, "norm2", l.FFN, l.Norm, x), cache
}

// CacheDims are the heads and the size dk of each head of the layer's
// self-attention cache, [batch, heads, maxLen, dk]. The error says why the
// layer cannot decode incrementally.
func (l EncoderLayer) CacheDims() (heads, dk int, err error) {
	return cacheDims(l.attentionOr(l.SelfAttn))
}

// incremental is a as an IncrementalAttention, or an error that says it is not one.
func incremental(a Attention) (IncrementalAttention, error) {
	ia, ok := a.(IncrementalAttention)
	if !ok {
		return nil, errors.Errorf("attention %T cannot decode incrementally: it is not a layers.IncrementalAttention", a)
	}
	return ia, nil
}

// cacheDims are the CacheDims of a, if it is an IncrementalAttention.
func cacheDims(a Attention) (heads, dk int, err error) {
	ia, err := incremental(a)
	if err != nil {
		return 0, 0, err
	}
	heads, dk = ia.CacheDims()
	return heads, dk, nil
}

// Encoder is the paper's encoder: a Stack of EncoderLayers. Under a causal
// mask it is the stack of a decoder-only model.
type Encoder struct {
	Layer EncoderLayer
	Stack
}

// Apply encodes x [batch, len, dModel] (embedded, with positions) under mask.
func (e Encoder) Apply(s *graph.Scope, x, mask *G.Node) *G.Node {
	return e.Stack.Apply(s, x, func(s *graph.Scope, x *G.Node) *G.Node {
		return e.Layer.Apply(s, x, mask)
	})
}

// Step runs a decoder-only stack on one new position x [batch, 1, dModel]
// (embedded, with its position) given each layer's self-attention cache.
// It returns the position's output and the updated caches.
func (e Encoder) Step(s *graph.Scope, x *G.Node, caches []KV, at Slot) (*G.Node, []KV) {
	return e.step(s, x, caches, func(s *graph.Scope, _ int, x *G.Node, cache KV) (*G.Node, KV) {
		return e.Layer.Step(s, x, cache, at)
	})
}
