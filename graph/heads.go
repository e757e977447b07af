package graph

import (
	"fmt"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// SplitHeads cuts the last axis of x [batch, len, heads·dk] into heads and moves
// the head axis forward: y[b, h, t, k] = x[b, t, h·dk + k], giving [batch, heads, len, dk].
func SplitHeads(x *G.Node, heads int) (*G.Node, error) {
	s := x.Shape()
	if x.Dims() != 3 || heads < 1 || s[2]%heads != 0 {
		return nil, errors.Errorf("split heads: x %v must be [batch, len, heads·dk] with %d heads", s, heads)
	}
	return permuteHeads(x, heads, true)
}

// MergeHeads is the inverse of SplitHeads: [batch, heads, len, dk] to
// [batch, len, heads·dk], the concatenation of the heads.
func MergeHeads(x *G.Node) (*G.Node, error) {
	if x.Dims() != 4 {
		return nil, errors.Errorf("merge heads: x %v must be [batch, heads, len, dk]", x.Shape())
	}
	return permuteHeads(x, x.Shape()[1], false)
}

// permuteHeads is SplitHeads (split true) or MergeHeads; each is the other's gradient.
func permuteHeads(x *G.Node, heads int, split bool) (*G.Node, error) {
	dims := 3
	if !split {
		dims = 4
	}
	op := &kernelOp{
		name:    fmt.Sprintf("heads(split=%t,heads=%d)", split, heads),
		arity:   1,
		sig:     signature(tensorType(7-dims), tensorType(dims)),
		diffWRT: []bool{true},
	}
	op.shape = func(s []tensor.Shape) (tensor.Shape, error) {
		if split {
			return tensor.Shape{s[0][0], heads, s[0][1], s[0][2] / heads}, nil
		}
		return tensor.Shape{s[0][0], s[0][2], heads * s[0][3]}, nil
	}
	op.forward = func(y *tensor.Dense, in []*tensor.Dense) error {
		// b, h, t, k as in [batch, heads, len, dk].
		var b, t, k int
		if split {
			b, t, k = y.Shape()[0], y.Shape()[2], y.Shape()[3]
		} else {
			b, t, k = in[0].Shape()[0], in[0].Shape()[2], in[0].Shape()[3]
		}
		switch yd := y.Data().(type) {
		case []float32:
			transposeHeads(yd, in[0].Data().([]float32), b, heads, t, k, split)
		case []float64:
			transposeHeads(yd, in[0].Data().([]float64), b, heads, t, k, split)
		}
		return nil
	}
	op.diff = func(_ G.Nodes, _, dy *G.Node) (G.Nodes, error) {
		dx, err := permuteHeads(dy, heads, !split)
		return G.Nodes{dx}, err
	}
	return apply(op, x)
}

// transposeHeads copies between the sequence-major layout [b, t, h, k] and the
// head-major one [b, h, t, k]: split reads x sequence-major and writes y
// head-major, !split the reverse.
func transposeHeads[T float](y, x []T, b, h, t, k int, split bool) {
	for bi := range b {
		for hi := range h {
			for ti := range t {
				hm := ((bi*h+hi)*t + ti) * k
				sm := ((bi*t+ti)*h + hi) * k
				if split {
					copy(y[hm:hm+k], x[sm:sm+k])
				} else {
					copy(y[sm:sm+k], x[hm:hm+k])
				}
			}
		}
	}
}
