package layers

import (
	G "gorgonia.org/gorgonia"

	"github.com/transformer-go/transformer/graph"
)

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
