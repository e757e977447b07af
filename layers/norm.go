package layers

import (
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
)

// Norm normalizes the last axis of x.
type Norm interface {
	Apply(s *graph.Scope, x *G.Node) *G.Node
}

// SumNorm is a Norm that also normalizes a sum x + r in one op, never
// writing the sum out: Residual's post-norm Norm(x + Dropout(f(x))) uses it
// when its Norm has it. ApplySum gives Apply(s, x + r) bit for bit.
type SumNorm interface {
	Norm
	ApplySum(s *graph.Scope, x, r *G.Node) *G.Node
}

// LayerNorm is layer normalization (Ba et al., 2016) with a gain "weight" and a
// bias "bias":
//
//	LayerNorm(x) = weight ⊙ (x - μ) / sqrt(σ² + Eps) + bias
type LayerNorm struct {
	DModel int
	Eps    float64
}

// Apply normalizes x [..., dModel].
func (n LayerNorm) Apply(s *graph.Scope, x *G.Node) *G.Node {
	g := s.Param("weight", tensor.Shape{n.DModel}, graph.Ones)
	b := s.Param("bias", tensor.Shape{n.DModel}, graph.Zeros)
	return s.LayerNorm(x, g, b, n.Eps)
}

// ApplySum normalizes x + r [..., dModel].
func (n LayerNorm) ApplySum(s *graph.Scope, x, r *G.Node) *G.Node {
	g := s.Param("weight", tensor.Shape{n.DModel}, graph.Ones)
	b := s.Param("bias", tensor.Shape{n.DModel}, graph.Zeros)
	return s.AddLayerNorm(x, r, g, b, n.Eps)
}

// RMSNorm is root-mean-square normalization (Zhang & Sennrich, 2019), a variant
// without centering or bias:
//
//	RMSNorm(x) = weight ⊙ x / sqrt(mean(x²) + Eps)
type RMSNorm struct {
	DModel int
	Eps    float64
}

// Apply normalizes x [..., dModel].
func (n RMSNorm) Apply(s *graph.Scope, x *G.Node) *G.Node {
	return s.Normalize(x, s.Param("weight", tensor.Shape{n.DModel}, graph.Ones), n.Eps, false)
}

// ApplySum normalizes x + r [..., dModel].
func (n RMSNorm) ApplySum(s *graph.Scope, x, r *G.Node) *G.Node {
	return s.AddNormalize(x, r, s.Param("weight", tensor.Shape{n.DModel}, graph.Ones), n.Eps, false)
}
