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
func (r Rotary) Apply(s *graph.Scope, x *G.Node) *G.Node {
	if err := r.check(x); err != nil {
		s.Fail(err)
		return nil
	}
	n := x.Shape()[x.Dims()-2]
	positions := make([]int, n)
	for i := range positions {
		positions[i] = i
	}
	cos, sin := r.tables(positions)
	// cos, sin: [len, dHead], broadcast over the leading axes of x.
	return r.rotate(s, x, s.Constant(fmt.Sprintf("rope.cos[%d]", n), graph.FromFloat64s(s.Dtype(), cos, n, r.DHead)),
		s.Constant(fmt.Sprintf("rope.sin[%d]", n), graph.FromFloat64s(s.Dtype(), sin, n, r.DHead)))
}

// At rotates x [..., len, dHead] at the positions pos, an int [len] below
// maxLen: an incremental decoder's step rotates its one position with the
// step's slot index.
func (r Rotary) At(s *graph.Scope, x, pos *G.Node, maxLen int) *G.Node {
	if err := r.check(x); err != nil {
		s.Fail(err)
		return nil
	}
	positions := make([]int, maxLen)
	for i := range positions {
		positions[i] = i
	}
	cos, sin := r.tables(positions)
	// The rows pos of the tables [maxLen, dHead]: [len, dHead].
	cosT := s.Constant(fmt.Sprintf("rope.cos[%d]", maxLen), graph.FromFloat64s(s.Dtype(), cos, maxLen, r.DHead))
	sinT := s.Constant(fmt.Sprintf("rope.sin[%d]", maxLen), graph.FromFloat64s(s.Dtype(), sin, maxLen, r.DHead))
	return r.rotate(s, x, s.Embed(cosT, pos, 1), s.Embed(sinT, pos, 1))
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

// tables are cos(p·θ_j) and the signed sin(p·θ_j) for each position p and
// feature j of a head (θ repeated over the two halves, the sine negated on
// the first), [len(positions), dHead].
func (r Rotary) tables(positions []int) (cos, sin []float64) {
	base := r.Base
	if base == 0 {
		base = 10000
	}
	half := r.DHead / 2
	cos, sin = make([]float64, len(positions)*r.DHead), make([]float64, len(positions)*r.DHead)
	for i, p := range positions {
		for j := range half {
			angle := float64(p) * math.Pow(base, -2*float64(j)/float64(r.DHead))
			c, sn := math.Cos(angle), math.Sin(angle)
			row := i * r.DHead
			cos[row+j], cos[row+half+j] = c, c
			sin[row+j], sin[row+half+j] = -sn, sn
		}
	}
	return cos, sin
}

// rotate is y = x ⊙ cos + swap(x) ⊙ sin, swap exchanging the two halves of
// each head (the sign of the rotation is in the sine table).
func (r Rotary) rotate(s *graph.Scope, x, cos, sin *G.Node) *G.Node {
	half := r.DHead / 2
	swapped := s.Concat(-1, s.Slice(x, -1, half, r.DHead), s.Slice(x, -1, 0, half))
	return s.Add(s.Mul(x, cos), s.Mul(swapped, sin))
}
