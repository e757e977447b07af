package layers

import (
	"math"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
)

// Positional adds position information to embedded sequences x [batch, len, dModel].
type Positional interface {
	// Apply adds the encodings of positions 0, 1, …, len-1.
	Apply(s *graph.Scope, x *G.Node) *G.Node
	// At adds the encodings of the positions pos, an int [batch, len] of
	// values below n: an incremental decoder's step adds position t this way.
	At(s *graph.Scope, x, pos *G.Node, n int) *G.Node
}

// addAt adds to x the rows pos of table [n, dModel]:
//
//	y[b, i, :] = x[b, i, :] + table[pos[b, i], :]
func addAt(s *graph.Scope, x, table, pos *G.Node) *G.Node {
	return s.Add(x, s.Embed(table, pos, 1))
}

// Sinusoidal is the paper's fixed positional encoding (section 3.5), positions
// counted from 0:
//
//	PE(pos, 2i)   = sin(pos / 10000^(2i/dModel))
//	PE(pos, 2i+1) = cos(pos / 10000^(2i/dModel))
type Sinusoidal struct{ DModel int }

// Apply adds PE to x.
func (p Sinusoidal) Apply(s *graph.Scope, x *G.Node) *G.Node {
	if x == nil {
		return nil
	}
	n := x.Shape()[1]
	pe := graph.FromFloat64s(s.Dtype(), SinusoidTable(n, p.DModel), n, p.DModel)
	return s.AddPositions(x, s.Constant("sinusoid", pe))
}

// At adds PE(pos) to x; pos must be below n.
func (p Sinusoidal) At(s *graph.Scope, x, pos *G.Node, n int) *G.Node {
	pe := graph.FromFloat64s(s.Dtype(), SinusoidTable(n, p.DModel), n, p.DModel)
	return addAt(s, x, s.Constant("sinusoid", pe), pos)
}

// SinusoidTable is PE for positions 0..n-1: n rows of dModel values.
func SinusoidTable(n, dModel int) []float64 {
	pe := make([]float64, n*dModel)
	for pos := range n {
		for i := 0; i < dModel; i += 2 {
			angle := float64(pos) / math.Pow(10000, float64(i)/float64(dModel))
			pe[pos*dModel+i] = math.Sin(angle)
			if i+1 < dModel {
				pe[pos*dModel+i+1] = math.Cos(angle)
			}
		}
	}
	return pe
}

// Learned is the learned-positions variant the paper compared (table 3, row E):
// a parameter "weight" [MaxLen, dModel] whose first len rows are added to x.
type Learned struct{ MaxLen, DModel int }

// Apply adds the learned positions to x.
func (p Learned) Apply(s *graph.Scope, x *G.Node) *G.Node {
	return s.AddPositions(x, p.weight(s))
}

// weight is the table [MaxLen, dModel], drawn from N(0, 0.02²).
func (p Learned) weight(s *graph.Scope) *G.Node {
	return s.Param("weight", tensor.Shape{p.MaxLen, p.DModel}, graph.Normal(0.02))
}

// At adds the learned rows pos to x; n must not exceed MaxLen.
func (p Learned) At(s *graph.Scope, x, pos *G.Node, n int) *G.Node {
	if n > p.MaxLen {
		s.Fail(errors.Errorf("learned positions: %d positions asked for, the table has %d", n, p.MaxLen))
		return nil
	}
	return addAt(s, x, p.weight(s), pos)
}

// NoPositions adds nothing: for models whose attention places positions
// itself, or that learn them from a causal mask alone.
type NoPositions struct{}

// Apply returns x.
func (NoPositions) Apply(_ *graph.Scope, x *G.Node) *G.Node { return x }

// At returns x.
func (NoPositions) At(_ *graph.Scope, x, _ *G.Node, _ int) *G.Node { return x }
