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
