package layers

import (
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
)

// Linear is the affine map y = x·Wᵀ + b over the last axis of x. W is stored
// [out, in] as in PyTorch's nn.Linear, under "weight", and b under "bias".
type Linear struct {
	In, Out int
	NoBias  bool
}

// NewLinear returns a Linear layer from in to out features, with bias.
func NewLinear(in, out int) Linear { return Linear{In: in, Out: out} }

// Apply adds the layer to s. x: [..., In] → [..., Out].
func (l Linear) Apply(s *graph.Scope, x *G.Node) *G.Node {
	w := s.Param("weight", tensor.Shape{l.Out, l.In}, graph.XavierUniform)
	if l.NoBias {
		return s.MatMul(x, w, true)
	}
	return s.Affine(x, w, s.Param("bias", tensor.Shape{l.Out}, graph.Zeros), true)
}
