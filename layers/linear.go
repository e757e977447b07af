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
	if l.NoBias {
		return s.MatMul(x, l.weight(s), true)
	}
	return s.Affine(x, l.weight(s), l.bias(s), true)
}

// ApplyReLU adds max(0, x·Wᵀ + b) to s: the layer and a ReLU after it, in
// one op (graph.AffineReLU) when the layer has a bias.
func (l Linear) ApplyReLU(s *graph.Scope, x *G.Node) *G.Node {
	if l.NoBias {
		return s.ReLU(l.Apply(s, x))
	}
	return s.AffineReLU(x, l.weight(s), l.bias(s), true)
}

func (l Linear) weight(s *graph.Scope) *G.Node {
	return s.Param("weight", tensor.Shape{l.Out, l.In}, graph.XavierUniform)
}

func (l Linear) bias(s *graph.Scope) *G.Node {
	return s.Param("bias", tensor.Shape{l.Out}, graph.Zeros)
}
