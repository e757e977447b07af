package layers

import (
	"slices"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"

	"github.com/transformer-go/transformer/graph"
)

// Sizes holds what every layer is made of, and what a Registry's
// constructors build sublayers from; a model.Config holds them, under the
// JSON names given.
type Sizes struct {
	// DModel is the model width, Heads the number of attention heads
	// (DModel must divide by it) and DFF the feed-forward inner size.
	DModel int `json:"d_model"`
	Heads  int `json:"heads"`
	DFF    int `json:"d_ff"`
	// Dropout applies to each sublayer's output before the residual sum
	// (and a model's to the embedding and position sums); AttnDropout to
	// the attention weights. Both in [0, 1).
	Dropout     float64 `json:"dropout"`
	AttnDropout float64 `json:"attn_dropout"`
	// Eps is the norms' epsilon.
	Eps float64 `json:"norm_eps"`
	// PreNorm normalizes each sublayer's input instead of the residual
	// sum; a pre-norm stack ends with a norm.
	PreNorm bool `json:"pre_norm"`
	// MaxLen bounds the length of every sequence: learned positions have
	// that many rows.
	MaxLen int `json:"max_len"`
	// KVHeads is the number of key/value heads of grouped-query attention
	// (a divisor of Heads, 1 for multi-query attention; 0 means Heads).
	KVHeads int `json:"kv_heads,omitempty"`
	// Options are the settings that variants declare (Option), by name:
	// Table.New fills in the defaults of those it leaves out.
	Options map[string]float64 `json:"options,omitempty"`
	// Cross says that the attention a Registry builds is cross-attention,
	// whose queries and keys are positions of different sequences: options
	// of positions (rotary, a bias) do not apply to it.
	Cross bool `json:"-"`
}

// Layer is one layer of the encoder or the decoder (section 3.1):
// self-attention, for a decoder layer (Cross) attention over the encoder's
// output (cross-attention), then the feed-forward network, each wrapped by
// Residual. Parameters: self_attn, norm1, then cross_attn, norm2 if Cross,
// then feed_forward and the last norm (norm2, or norm3 after
// cross-attention).
//
// SelfAttn, CrossAttn, FFN and Norm are its sublayers; each left nil is the
// paper's (MultiHeadAttention, FeedForward, LayerNorm of the Sizes), so
// Layer{Sizes: z} is the paper's encoder layer, Layer{Sizes: z, Cross:
// true} its decoder layer, and setting FFN swaps the feed-forward network
// alone. Under a causal mask an encoder layer is the layer of a
// decoder-only (GPT-style) model.
type Layer struct {
	Sizes
	SelfAttn  Attention
	Cross     bool
	CrossAttn Attention
	FFN       FFN
	Norm      Norm
}

// LayerCache is a layer's caches in incremental decoding (Stack.Caches):
// its self-attention's and, for a decoder layer, its cross-attention's.
type LayerCache struct{ Self, Cross *Cache }

// Apply maps x [batch, len, dModel] to the same shape. mask is the additive
// self-attention mask (PaddingMask, or CausalMask in a decoder); a decoder
// layer attends to memory [batch, lenS, dModel], the encoder's output,
// under memMask (PaddingMask of the sources). With a cache (incremental
// decoding), x is one new position and the attentions run with their
// caches, which read neither mask nor memory.
func (l Layer) Apply(s *graph.Scope, x, mask, memory, memMask *G.Node, cache *LayerCache) *G.Node {
	if s.Err() != nil {
		return nil
	}
	if cache == nil {
		cache = &LayerCache{}
	}
	r := Residual{Norm: l.norm(), Dropout: l.Dropout, PreNorm: l.PreNorm}
	self := l.attention(l.SelfAttn)
	x = r.Apply(s.In("norm1"), x, func(h *G.Node) *G.Node {
		return keepsShape(s.In("self_attn"), self, h, self.Apply(s.In("self_attn"), h, h, mask, cache.Self))
	})
	last := "norm2"
	if l.Cross {
		cross := l.attention(l.CrossAttn)
		x = r.Apply(s.In("norm2"), x, func(h *G.Node) *G.Node {
			return keepsShape(s.In("cross_attn"), cross, h, cross.Apply(s.In("cross_attn"), h, memory, memMask, cache.Cross))
		})
		last = "norm3"
	}
	f := l.FFN
	if f == nil {
		f = NewFeedForward(l.DModel, l.DFF)
	}
	return r.Apply(s.In(last), x, func(h *G.Node) *G.Node {
		return keepsShape(s.In("feed_forward"), f, h, f.Apply(s.In("feed_forward"), h))
	})
}

// keepsShape is y, the output of the sublayer sub (in scope s) on x,
// refused (nil, the error recorded in s, naming the sublayer and the
// shapes) unless it has x's shape, as its residual connection needs.
func keepsShape(s *graph.Scope, sub any, x, y *G.Node) *G.Node {
	if s.Err() != nil || x == nil || y == nil || slices.Equal(x.Shape(), y.Shape()) {
		return y
	}
	s.Fail(errors.Errorf("the sublayer %T mapped its input %v to %v: a sublayer of a residual connection keeps its input's shape", sub, x.Shape(), y.Shape()))
	return nil
}

// attention is a, or the paper's multi-head attention if a is nil.
func (l Layer) attention(a Attention) Attention {
	if a == nil {
		return NewMultiHeadAttention(l.DModel, l.Heads, l.AttnDropout)
	}
	return a
}

// norm is the layer's norm, or the paper's layer norm.
func (l Layer) norm() Norm {
	if l.Norm != nil {
		return l.Norm
	}
	return LayerNorm{DModel: l.DModel, Eps: l.Eps}
}

// Residual wraps a sublayer f with dropout, a residual connection and a norm.
// Post-norm is the paper's (section 5.4):
//
//	post-norm: y = Norm(x + Dropout(f(x)))
//	pre-norm:  y = x + Dropout(f(Norm(x)))
//
// Pre-norm (Xiong et al., 2020) trains without warmup troubles and needs a final
// norm after the last layer of a stack.
// Post-norm with a SumNorm (LayerNorm and RMSNorm are) normalizes the sum in
// the norm's op, without writing it out.
type Residual struct {
	Norm    Norm
	Dropout float64
	PreNorm bool
}

// Apply wraps f around x; the norm's parameters go in s.
func (r Residual) Apply(s *graph.Scope, x *G.Node, f func(x *G.Node) *G.Node) *G.Node {
	if r.Norm == nil {
		s.Fail(errors.New("residual sublayer without a norm"))
		return nil
	}
	if r.PreNorm {
		return s.Add(x, s.Dropout(f(r.Norm.Apply(s, x)), r.Dropout))
	}
	y := s.Dropout(f(x), r.Dropout)
	if n, ok := r.Norm.(SumNorm); ok {
		return n.ApplySum(s, x, y)
	}
	return r.Norm.Apply(s, s.Add(x, y))
}
