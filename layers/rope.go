package layers

import (
	"fmt"
	"math"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"

	"github.com/transformer-go/transformer/graph"
)

// Rotary is the rotary position embedding (RoPE; Su et al., 2021) of
// attention queries and keys: each pair of features (j, j + dHead/2) of a
// head at position p is rotated by the angle p·θ_j,
//
//	θ_j = Base^(-2j/dHead),   j < dHead/2
//	y_j          = x_j·cos(p·θ_j) - x_{j+dHead/2}·sin(p·θ_j)
//	y_{j+dHead/2} = x_{j+dHead/2}·cos(p·θ_j) + x_j·sin(p·θ_j)
//
// (the "rotate half" pairing of GPT-NeoX and Hugging Face's LLaMA), so that
// the product of a query at p and a key at p' depends on p - p' alone.
// It has no parameters.
type Rotary struct {
	DHead int
	// Base is 10000 when 0.
	Base float64
}

// Apply rotates x [..., len, dHead] (the heads' queries or keys) at
// positions 0, 1, …, len-1.
func (r Rotary) Apply(s *graph.Scope, x *G.Node) *G.Node { return r.At(s, x, nil, 0) }

// At rotates x [..., len, dHead] at the positions pos, an int [len] below
// maxLen: an incremental decoder's step rotates its one position with the
// step's slot index. A nil pos is Apply's positions 0, 1, …, len-1.
func (r Rotary) At(s *graph.Scope, x, pos *G.Node, maxLen int) *G.Node {
	if err := r.check(x); err != nil {
		s.Fail(err)
		return nil
	}
	if pos == nil {
		// cos, sin: [len, dHead], broadcast over the leading axes of x.
		cos, sin := r.tables(s, x.Shape()[x.Dims()-2])
		return r.rotate(s, x, cos, sin)
	}
	// The rows pos of the tables [maxLen, dHead]: [len, dHead].
	cos, sin := r.tables(s, maxLen)
	return r.rotate(s, x, s.Embed(cos, pos, 1), s.Embed(sin, pos, 1))
}

// sideBySide rotates x [batch, len, heads·dHead], the heads side by side
// as attention's projections leave them, at positions 0, 1, … or, with a
// slot, at at.Index: as [batch, len, heads, dHead] by rows [len, 1, dHead].
func (r Rotary) sideBySide(s *graph.Scope, x *G.Node, heads int, at *Slot) *G.Node {
	b, n := x.Shape()[0], x.Shape()[1]
	h := s.Reshape(x, b, n, heads, r.DHead)
	if err := r.check(h); err != nil {
		s.Fail(err)
		return nil
	}
	cos, sin := r.tables(s, positions(x, at))
	if at != nil {
		cos, sin = s.Embed(cos, at.Index, 1), s.Embed(sin, at.Index, 1)
	}
	y := r.rotate(s, h, s.Reshape(cos, n, 1, r.DHead), s.Reshape(sin, n, 1, r.DHead))
	return s.Reshape(y, b, n, heads*r.DHead)
}

func (r Rotary) check(x *G.Node) error {
	if x == nil {
		return errors.New("rotary: no input")
	}
	if r.DHead < 2 || r.DHead%2 != 0 || x.Dims() < 2 || x.Shape()[x.Dims()-1] != r.DHead {
		return errors.Errorf("rotary: x %v must end in an even head size %d", x.Shape(), r.DHead)
	}
	return nil
}

// tables are the constants cos(p·θ_j) and the signed sin(p·θ_j) for each
// position p < n and feature j of a head (θ repeated over the two halves,
// the sine negated on the first), [n, dHead].
func (r Rotary) tables(s *graph.Scope, n int) (cos, sin *G.Node) {
	base := r.Base
	if base == 0 {
		base = 10000
	}
	half := r.DHead / 2
	c, sn := make([]float64, n*r.DHead), make([]float64, n*r.DHead)
	for p := range n {
		for j := range half {
			angle := float64(p) * math.Pow(base, -2*float64(j)/float64(r.DHead))
			row := p * r.DHead
			c[row+j], c[row+half+j] = math.Cos(angle), math.Cos(angle)
			sn[row+j], sn[row+half+j] = -math.Sin(angle), math.Sin(angle)
		}
	}
	name := fmt.Sprintf("rope%g[%d]", base, n)
	return s.Constant(name+".cos", graph.FromFloat64s(s.Dtype(), c, n, r.DHead)), s.Constant(name+".sin", graph.FromFloat64s(s.Dtype(), sn, n, r.DHead))
}

// rotate is y = x ⊙ cos + swap(x) ⊙ sin, swap exchanging the two halves of
// each head (the sign of the rotation is in the sine table).
func (r Rotary) rotate(s *graph.Scope, x, cos, sin *G.Node) *G.Node {
	half := r.DHead / 2
	swapped := s.Concat(-1, s.Slice(x, -1, half, r.DHead), s.Slice(x, -1, 0, half))
	return s.Add(s.Mul(x, cos), s.Mul(swapped, sin))
}
