package layers

import (
	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"

	"github.com/transformer-go/transformer/graph"
)

// Residual wraps a sublayer f with dropout, a residual connection and a norm.
// Post-norm is the paper's (section 5.4):
//
//	post-norm: y = Norm(x + Dropout(f(x)))
//	pre-norm:  y = x + Dropout(f(Norm(x)))
//
// Pre-norm (Xiong et al., 2020) trains without warmup troubles and needs a final
// norm after the last layer of a stack.
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
	return r.Norm.Apply(s, s.Add(x, s.Dropout(f(x), r.Dropout)))
}
