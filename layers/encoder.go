package layers

import (
	G "gorgonia.org/gorgonia"

	"github.com/transformer-go/transformer/graph"
)

// Sizes holds what every encoder and decoder layer is made of.
type Sizes struct {
	DModel, Heads, DFF int
	// Dropout applies to each sublayer's output before the residual sum;
	// AttnDropout to the attention weights.
	Dropout, AttnDropout float64
	// Norm is "layer" (the paper's) or "rms"; Eps its epsilon.
	Norm string
	Eps  float64
	// PreNorm normalizes each sublayer's input instead of the residual sum.
	PreNorm bool
}

// residual returns the residual wrapper of these sizes, recording an unknown norm in s.
func (z Sizes) residual(s *graph.Scope) Residual {
	norm, err := NewNorm(z.Norm, z.DModel, z.Eps)
	s.Fail(err)
	return Residual{Norm: norm, Dropout: z.Dropout, PreNorm: z.PreNorm}
}

func (z Sizes) attention() MultiHeadAttention {
	return NewMultiHeadAttention(z.DModel, z.Heads, z.AttnDropout)
}

// EncoderLayer is one layer of the encoder (section 3.1): self-attention, then
// the feed-forward network, each wrapped by Residual. Parameters: self_attn,
// norm1, feed_forward, norm2.
//
// With a causal mask it is also the layer of a decoder-only (GPT-style) model.
type EncoderLayer struct{ Sizes }

// Apply maps x [batch, len, dModel] to the same shape; mask is the additive
// self-attention mask (PaddingMask, or CausalMask for a decoder-only model).
func (l EncoderLayer) Apply(s *graph.Scope, x, mask *G.Node) *G.Node {
	if s.Err() != nil {
		return nil
	}
	x = l.residual(s).Apply(s.In("norm1"), x, func(h *G.Node) *G.Node {
		return l.attention().Apply(s.In("self_attn"), h, h, mask)
	})
	return l.residual(s).Apply(s.In("norm2"), x, func(h *G.Node) *G.Node {
		return NewFeedForward(l.DModel, l.DFF).Apply(s.In("feed_forward"), h)
	})
}

// Stack is N identical layers ("layers.0", "layers.1", …) and, if FinalNorm,
// a norm ("norm") after the last. Pre-norm stacks need the final norm; the
// paper's post-norm ones do not have it.
type Stack struct {
	N         int
	FinalNorm bool
}

// Encoder is the paper's encoder: a Stack of EncoderLayers.
type Encoder struct {
	Layer EncoderLayer
	Stack
}

// Apply encodes x [batch, len, dModel] (embedded, with positions) under mask.
func (e Encoder) Apply(s *graph.Scope, x, mask *G.Node) *G.Node {
	for i := range e.N {
		x = e.Layer.Apply(s.In("layers", i), x, mask)
	}
	return e.finish(s, e.Layer.Sizes, x)
}

// finish applies the stack's final norm, if any.
func (st Stack) finish(s *graph.Scope, z Sizes, x *G.Node) *G.Node {
	if !st.FinalNorm {
		return x
	}
	norm, err := NewNorm(z.Norm, z.DModel, z.Eps)
	s.Fail(err)
	if err != nil {
		return nil
	}
	return norm.Apply(s.In("norm"), x)
}
