package graph

import (
	"fmt"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// reduction is what Reduce computes over an axis.
type reduction int

const (
	sumAxis reduction = iota
	meanAxis
	maxAxis
)

var reductionNames = [...]string{sumAxis: "sum", meanAxis: "mean", maxAxis: "max"}

// Sum adds x up along axis (negative counts from the end): y = Σ_k x[..., k, ...].
// With keep the axis stays, of size 1, so that y broadcasts against x;
// without, it is dropped. dx = dy repeated along the axis.
func Sum(x *G.Node, axis int, keep bool) (*G.Node, error) { return reduce(sumAxis, x, axis, keep) }

// Mean is Sum divided by the axis's size.
func Mean(x *G.Node, axis int, keep bool) (*G.Node, error) { return reduce(meanAxis, x, axis, keep) }

// Max is the largest element along axis, NaN if one is. Its gradient goes
// to the first largest element of each row: dx = dy there, 0 elsewhere.
func Max(x *G.Node, axis int, keep bool) (*G.Node, error) { return reduce(maxAxis, x, axis, keep) }

func reduce(r reduction, x *G.Node, axis int, keep bool) (*G.Node, error) {
	s := x.Shape()
	a, err := axisOf(axis, len(s))
	if err != nil {
		return nil, errors.Wrapf(err, "%s of %v", reductionNames[r], s)
	}
	out := s.Clone()
	if keep {
		out[a] = 1
	} else {
		out = append(out[:a], out[a+1:]...)
	}
	outer, inner := blocks(s, a)
	v := view{outer: outer, n: s[a], inner: inner}
	op := Op{
		Name:   fmt.Sprintf("%s(axis=%d,keep=%t)", reductionNames[r], a, keep),
		Arity:  1,
		Shape:  func([]tensor.Shape) (tensor.Shape, error) { return out.Clone(), nil },
		F32:    reduceKernels[float32](r, v),
		F64:    reduceKernels[float64](r, v),
		Device: reduceDevice(r, v),
		ONNX:   reduceONNX(r, a, keep),
		Diff:   []bool{true},
	}
	if r == maxAxis {
		op.Save, op.SaveOutput = []int{0}, true
	}
	return op.Apply(x)
}

// view is a tensor seen as [outer, n, inner] around the reduced axis.
type view struct{ outer, n, inner int }

// each calls f for every o < outer, several goroutines each taking some.
func (v view) each(f func(o int)) {
	forElems(v.outer, v.n*v.inner, func(lo, hi int) {
		for o := lo; o < hi; o++ {
			f(o)
		}
	})
}

func reduceKernels[T Float](r reduction, v view) Kernels[T] {
	scale := T(1)
	if r == meanAxis {
		scale = T(1 / float64(v.n))
	}
	return Kernels[T]{
		Forward: func(y Operand[T], in []Operand[T]) error {
			if r == maxAxis {
				maxRows(y.Data, in[0].Data, v)
			} else {
				sumRowsScaled(y.Data, in[0].Data, v, scale)
			}
			return nil
		},
		Backward: func(_ int, dx Operand[T], in []Operand[T], y, dy Operand[T]) error {
			if r == maxAxis {
				maxBackward(dx.Data, in[0].Data, y.Data, dy.Data, v)
			} else {
				spreadRows(dx.Data, dy.Data, v, scale)
			}
			return nil
		},
	}
}

// sumRowsScaled is y[o, i] = scale · Σ_k x[o, k, i].
func sumRowsScaled[T Float](y, x []T, v view, scale T) {
	v.each(func(o int) {
		yr := y[o*v.inner : (o+1)*v.inner]
		clear(yr)
		for k := range v.n {
			at := (o*v.n + k) * v.inner
			for i, e := range x[at : at+v.inner] {
				yr[i] += e
			}
		}
		if scale != 1 {
			for i := range yr {
				yr[i] *= scale
			}
		}
	})
}

// spreadRows is dx[o, k, i] = scale · dy[o, i].
func spreadRows[T Float](dx, dy []T, v view, scale T) {
	v.each(func(o int) {
		g := dy[o*v.inner : (o+1)*v.inner]
		for k := range v.n {
			at := (o*v.n + k) * v.inner
			for i, e := range g {
				dx[at+i] = scale * e
			}
		}
	})
}

// maxRows is y[o, i] = max_k x[o, k, i], NaN if any is NaN.
func maxRows[T Float](y, x []T, v view) {
	v.each(func(o int) {
		yr := y[o*v.inner : (o+1)*v.inner]
		copy(yr, x[o*v.n*v.inner:])
		for k := 1; k < v.n; k++ {
			at := (o*v.n + k) * v.inner
			for i, e := range x[at : at+v.inner] {
				if e > yr[i] || e != e {
					yr[i] = e
				}
			}
		}
	})
}

// maxBackward routes dy[o, i] to the first k where x[o, k, i] = y[o, i].
func maxBackward[T Float](dx, x, y, dy []T, v view) {
	v.each(func(o int) {
		clear(dx[o*v.n*v.inner : (o+1)*v.n*v.inner])
		for i := range v.inner {
			m := y[o*v.inner+i]
			for k := range v.n {
				at := (o*v.n+k)*v.inner + i
				if x[at] == m {
					dx[at] = dy[o*v.inner+i]
					break
				}
			}
		}
	})
}
