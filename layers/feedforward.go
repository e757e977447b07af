package layers

import (
	G "gorgonia.org/gorgonia"

	"github.com/transformer-go/transformer/graph"
)

// FeedForward is the position-wise feed-forward network (section 3.3), applied
// to each position separately and identically:
//
//	FFN(x) = max(0, x·W1 + b1)·W2 + b2
//
// with inner size dFF. Parameters: linear1 [dFF, dModel] and linear2 [dModel, dFF].
type FeedForward struct{ DModel, DFF int }

// NewFeedForward returns a feed-forward network of the given sizes.
func NewFeedForward(dModel, dFF int) FeedForward { return FeedForward{DModel: dModel, DFF: dFF} }

// Apply maps x [..., dModel] to [..., dModel].
func (f FeedForward) Apply(s *graph.Scope, x *G.Node) *G.Node {
	h := NewLinear(f.DModel, f.DFF).ApplyReLU(s.In("linear1"), x)
	return NewLinear(f.DFF, f.DModel).Apply(s.In("linear2"), h)
}

// SwiGLU is the gated feed-forward network of Shazeer (2020), as in PaLM and
// LLaMA: the inner layer is the product of a SiLU-gated projection and a
// linear one,
//
//	FFN_SwiGLU(x) = (SiLU(x·W_gate) ⊙ x·W_up)·W_down
//
// with inner size DFF and no biases. Parameters: gate_proj, up_proj
// [DFF, DModel] and down_proj [DModel, DFF], each a Linear without bias.
type SwiGLU struct{ DModel, DFF int }

// Apply maps x [..., DModel] to [..., DModel].
func (f SwiGLU) Apply(s *graph.Scope, x *G.Node) *G.Node {
	in := Linear{In: f.DModel, Out: f.DFF, NoBias: true}
	// h: [..., DFF]
	h := s.Mul(s.SiLU(in.Apply(s.In("gate_proj"), x)), in.Apply(s.In("up_proj"), x))
	return Linear{In: f.DFF, Out: f.DModel, NoBias: true}.Apply(s.In("down_proj"), h)
}
