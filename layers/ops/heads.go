package ops

import (
	"fmt"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
)

// SplitHeads cuts the last axis of x [batch, len, heads·dk] into heads and moves
// the head axis forward: y[b, h, t, k] = x[b, t, h·dk + k], giving [batch, heads, len, dk].
func SplitHeads(s *graph.Scope, x *G.Node, heads int) *G.Node {
	return s.Record(func() (*G.Node, error) {
		if x.Dims() != 3 || heads < 1 || x.Shape()[2]%heads != 0 {
			return nil, errors.Errorf("split heads: x %v must be [batch, len, heads·dk] with %d heads", x.Shape(), heads)
		}
		return permuteHeads(x, heads, true)
	}, x)
}

// MergeHeads is the inverse of SplitHeads: [batch, heads, len, dk] to
// [batch, len, heads·dk], the concatenation of the heads.
func MergeHeads(s *graph.Scope, x *G.Node) *G.Node {
	return s.Record(func() (*G.Node, error) {
		if x.Dims() != 4 {
			return nil, errors.Errorf("merge heads: x %v must be [batch, heads, len, dk]", x.Shape())
		}
		return permuteHeads(x, x.Shape()[1], false)
	}, x)
}

// permuteHeads is SplitHeads (split true) or MergeHeads; each is the other's gradient.
func permuteHeads(x *G.Node, heads int, split bool) (*G.Node, error) {
	return graph.Op{
		Name:  fmt.Sprintf("heads(split=%t,heads=%d)", split, heads),
		Arity: 1,
		Shape: func(s []tensor.Shape) (tensor.Shape, error) {
			if split {
				return tensor.Shape{s[0][0], heads, s[0][1], s[0][2] / heads}, nil
			}
			return tensor.Shape{s[0][0], s[0][2], heads * s[0][3]}, nil
		},
		F32:    graph.Kernels[float32]{Forward: headsKernel[float32](heads, split)},
		F64:    graph.Kernels[float64]{Forward: headsKernel[float64](heads, split)},
		Device: headsDevice(heads, split),
		ONNX:   headsONNX(split),
		Diff:   []bool{true},
		Grad: func(_ G.Nodes, _, dy *G.Node) (G.Nodes, error) {
			dx, err := permuteHeads(dy, heads, !split)
			return G.Nodes{dx}, err
		},
	}.Apply(x)
}

// headsKernel copies between the sequence-major layout [b, t, h, k] and the
// head-major one [b, h, t, k]: split reads x sequence-major and writes y
// head-major, !split the reverse. Several goroutines each copy the heads of
// some of the batch entries.
func headsKernel[T graph.Float](h int, split bool) func(graph.Operand[T], []graph.Operand[T]) error {
	return func(y graph.Operand[T], in []graph.Operand[T]) error {
		s := y.Shape // the head-major side
		if !split {
			s = in[0].Shape
		}
		b, t, k := s[0], s[2], s[3]
		graph.ParallelFor(b, h*t*k, func(lo, hi int) {
			for bi := lo; bi < hi; bi++ {
				for hd := range h {
					for ti := range t {
						hm := ((bi*h+hd)*t + ti) * k
						sm := ((bi*t+ti)*h + hd) * k
						if split {
							copy(y.Data[hm:hm+k], in[0].Data[sm:sm+k])
						} else {
							copy(y.Data[sm:sm+k], in[0].Data[hm:hm+k])
						}
					}
				}
			}
		})
		return nil
	}
}
