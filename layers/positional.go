package layers

import (
	"math"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/layers/ops"
)

// Positional adds position information to embedded sequences x [batch, len,
// dModel]: the encodings of positions 0, 1, …, len-1, or with a slot at
// (incremental decoding, len 1) of position at.Index, below the length of
// at.Mask.
type Positional interface {
	Apply(s *graph.Scope, x *G.Node, at *Slot) *G.Node
}

// addTable adds the rows of table [n, dModel] to x: rows 0 … len-1, or row
// at.Index:
//
//	y[b, i, :] = x[b, i, :] + table[i or at.Index, :]
func addTable(s *graph.Scope, x, table *G.Node, at *Slot) *G.Node {
	if at != nil {
		table = s.Embed(table, at.Index, 1)
	}
	return ops.AddPositions(s, x, table)
}

// positions is the number of rows a table needs for x at the slot at.
func positions(x *G.Node, at *Slot) int {
	if at != nil {
		return at.Mask.Shape()[3]
	}
	return x.Shape()[1]
}

// Sinusoidal is the paper's fixed positional encoding (section 3.5), positions
// counted from 0:
//
//	PE(pos, 2i)   = sin(pos / 10000^(2i/dModel))
//	PE(pos, 2i+1) = cos(pos / 10000^(2i/dModel))
type Sinusoidal struct{ DModel int }

// Apply adds PE to x.
func (p Sinusoidal) Apply(s *graph.Scope, x *G.Node, at *Slot) *G.Node {
	if x == nil {
		return nil
	}
	n := positions(x, at)
	pe := graph.FromFloat64s(s.Dtype(), SinusoidTable(n, p.DModel), n, p.DModel)
	return addTable(s, x, s.Constant("sinusoid", pe), at)
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
// a parameter "weight" [MaxLen, dModel] whose rows are added to x.
type Learned struct{ MaxLen, DModel int }

// Apply adds the learned positions to x.
func (p Learned) Apply(s *graph.Scope, x *G.Node, at *Slot) *G.Node {
	if x == nil {
		return nil
	}
	if n := positions(x, at); n > p.MaxLen {
		s.Fail(errors.Errorf("learned positions: %d positions asked for, the table has %d", n, p.MaxLen))
		return nil
	}
	// weight: [MaxLen, dModel], drawn from N(0, 0.02²)
	return addTable(s, x, s.Param("weight", tensor.Shape{p.MaxLen, p.DModel}, graph.Normal(0.02)), at)
}

// NoPositions adds nothing: for models whose attention places positions
// itself, or that learn them from a causal mask alone.
type NoPositions struct{}

// Apply leaves x as it is: the positions, if any, come from elsewhere.
func (NoPositions) Apply(_ *graph.Scope, x *G.Node, _ *Slot) *G.Node { return x }
