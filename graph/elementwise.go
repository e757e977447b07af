package graph

import (
	"fmt"

	"github.com/pkg/errors"
	"github.com/transformer-go/transformer/graph/internal/vrow"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// binary is an elementwise operation of two operands.
type binary int

const (
	add binary = iota
	sub
	mul
	div
)

var binaryNames = [...]string{add: "add", sub: "sub", mul: "mul", div: "div"}

// Add is a + b elementwise, the operands broadcasting to one shape
// (BroadcastShape): the residual connections, or a row added to every row.
func Add(a, b *G.Node) (*G.Node, error) { return elementwise(add, a, b) }

// Sub is a - b elementwise, with broadcasting.
func Sub(a, b *G.Node) (*G.Node, error) { return elementwise(sub, a, b) }

// Mul is the elementwise (Hadamard) product a ⊙ b, with broadcasting.
func Mul(a, b *G.Node) (*G.Node, error) { return elementwise(mul, a, b) }

// Div is a / b elementwise, with broadcasting.
func Div(a, b *G.Node) (*G.Node, error) { return elementwise(div, a, b) }

// elementwise applies the binary op k to a and b. The gradients sum over the
// axes an operand was broadcast along:
//
//	add: da = dy, db = dy            sub: da = dy, db = -dy
//	mul: da = dy ⊙ b, db = dy ⊙ a    div: da = dy / b, db = -dy ⊙ a / b²
func elementwise(k binary, a, b *G.Node) (*G.Node, error) {
	out, err := BroadcastShape(a.Shape(), b.Shape())
	if err != nil {
		return nil, errors.Wrap(err, binaryNames[k])
	}
	plan := newBcast(out, a.Shape(), b.Shape())
	op := Op{
		Name:   binaryNames[k],
		Arity:  2,
		Shape:  func(s []tensor.Shape) (tensor.Shape, error) { return BroadcastShape(s[0], s[1]) },
		F32:    binaryKernels[float32](k, plan),
		F64:    binaryKernels[float64](k, plan),
		Device: binaryDevice(k),
		ONNX:   binaryONNX(k),
		Diff:   []bool{true, true},
	}
	switch k {
	case add, sub:
		sign := 1.0
		if k == sub {
			sign = -1
		}
		op.Grad = func(x G.Nodes, _, dy *G.Node) (G.Nodes, error) {
			da, err := sumTo(dy, x[0].Shape(), 1)
			if err != nil {
				return nil, err
			}
			db, err := sumTo(dy, x[1].Shape(), sign)
			return G.Nodes{da, db}, err
		}
	default:
		op.Save = []int{0, 1}
	}
	return op.Apply(a, b)
}

// binaryKernels are op k's kernels over the broadcast plan p.
func binaryKernels[T Float](k binary, p bcast) Kernels[T] {
	return Kernels[T]{
		Forward: func(y Operand[T], x []Operand[T]) error {
			a, b := x[0].Data, x[1].Data
			p.parallel(1, func(o int, off, st []int, n int) {
				binaryRun(k, y.Data[o:o+n], a[off[0]:], b[off[1]:], st[0], st[1])
			})
			return nil
		},
		Backward: func(i int, dx Operand[T], x []Operand[T], _, dy Operand[T]) error {
			clear(dx.Data)
			a, b := x[0].Data, x[1].Data
			p.accumulate(i, 1, func(o int, off, st []int, n int) {
				partialRun(k, i, dx.Data[off[i]:], dy.Data[o:o+n], a[off[0]:], b[off[1]:], st)
			})
			return nil
		},
	}
}

// binaryRun writes y[j] = a[j·sa] k b[j·sb] for j < len(y), the strides
// being 0 (a broadcast value) or 1.
func binaryRun[T Float](k binary, y, a, b []T, sa, sb int) {
	n := len(y)
	switch {
	case sa == 1 && sb == 1:
		a, b = a[:n], b[:n]
		if y32, ok := any(y).([]float32); ok && k == add {
			vrow.Add(y32, any(a).([]float32), any(b).([]float32))
			return
		}
		switch k {
		case add:
			for j := range y {
				y[j] = a[j] + b[j]
			}
		case sub:
			for j := range y {
				y[j] = a[j] - b[j]
			}
		case mul:
			for j := range y {
				y[j] = a[j] * b[j]
			}
		case div:
			for j := range y {
				y[j] = a[j] / b[j]
			}
		}
	case sa == 1:
		a, c := a[:n], b[0]
		switch k {
		case add:
			for j := range y {
				y[j] = a[j] + c
			}
		case sub:
			for j := range y {
				y[j] = a[j] - c
			}
		case mul:
			for j := range y {
				y[j] = a[j] * c
			}
		case div:
			for j := range y {
				y[j] = a[j] / c
			}
		}
	default:
		for j := range y {
			y[j] = binaryOf(k, a[j*sa], b[j*sb])
		}
	}
}

// binaryOf is a k b.
func binaryOf[T Float](k binary, a, b T) T {
	switch k {
	case add:
		return a + b
	case sub:
		return a - b
	case mul:
		return a * b
	}
	return a / b
}

// partialRun adds the gradient of operand i of a k b over one run to dx,
// which the run reaches with stride st[i]: dx[j·st[i]] += dy[j]·∂(a k b)/∂x_i.
func partialRun[T Float](k binary, i int, dx, dy, a, b []T, st []int) {
	sa, sb, sx := st[0], st[1], st[i]
	if k == mul {
		// ∂(a·b)/∂a = b and ∂(a·b)/∂b = a: dy times the other operand.
		o, so := b, sb
		if i == 1 {
			o, so = a, sa
		}
		mulAccumulate(dx, dy, o, sx, so)
		return
	}
	for j, g := range dy {
		bv := b[j*sb]
		if i == 0 {
			dx[j*sx] += g / bv
		} else {
			dx[j*sx] -= g * a[j*sa] / (bv * bv)
		}
	}
}

// mulAccumulate is dx[j·sx] += dy[j]·o[j·so], the strides 0 or 1; a run
// onto one element of dx sums in a register.
func mulAccumulate[T Float](dx, dy, o []T, sx, so int) {
	switch {
	case sx == 0:
		var acc T
		for j, g := range dy {
			acc += g * o[j*so]
		}
		dx[0] += acc
	case so == 1:
		dx, o = dx[:len(dy)], o[:len(dy)]
		for j, g := range dy {
			dx[j] += g * o[j]
		}
	default:
		c := o[0]
		dx = dx[:len(dy)]
		for j, g := range dy {
			dx[j] += g * c
		}
	}
}

// sumTo sums x over the axes along which shape was broadcast to x's shape,
// times scale: the gradient of an operand that was broadcast. It is x itself
// when nothing is summed or scaled.
func sumTo(x *G.Node, shape tensor.Shape, scale float64) (*G.Node, error) {
	if x.Shape().Eq(shape) && scale == 1 {
		return x, nil
	}
	return broadcastOp(x, shape, scale, true)
}

// broadcastTo repeats x along the axes along which it broadcasts to shape,
// times scale: the gradient of sumTo.
func broadcastTo(x *G.Node, shape tensor.Shape, scale float64) (*G.Node, error) {
	if x.Shape().Eq(shape) && scale == 1 {
		return x, nil
	}
	return broadcastOp(x, shape, scale, false)
}

// broadcastOp is sumTo (sum true) or broadcastTo: y = scale · Σ x over the
// broadcast axes, or y = scale · x repeated along them.
func broadcastOp(x *G.Node, shape tensor.Shape, scale float64, sum bool) (*G.Node, error) {
	big, small := x.Shape(), shape
	name := "broadcast_to"
	if sum {
		name = "sum_to"
		if b, err := BroadcastShape(small, big); err != nil || !b.Eq(big) {
			return nil, errors.Errorf("%s: %v does not broadcast to %v", name, small, big)
		}
	} else {
		big, small = shape, x.Shape()
		if b, err := BroadcastShape(small, big); err != nil || !b.Eq(big) {
			return nil, errors.Errorf("%s: %v does not broadcast to %v", name, small, big)
		}
	}
	plan := newBcast(big, small)
	out := shape.Clone()
	return Op{
		Name:   fmt.Sprintf("%s(%v,scale=%g)", name, out, scale),
		Arity:  1,
		Shape:  func([]tensor.Shape) (tensor.Shape, error) { return out.Clone(), nil },
		F32:    Kernels[float32]{Forward: broadcastKernel[float32](plan, scale, sum)},
		F64:    Kernels[float64]{Forward: broadcastKernel[float64](plan, scale, sum)},
		Device: broadcastDevice(scale, sum),
		Diff:   []bool{true},
		Grad: func(_ G.Nodes, _, dy *G.Node) (G.Nodes, error) {
			var dx *G.Node
			var err error
			if sum {
				dx, err = broadcastTo(dy, big, scale)
			} else {
				dx, err = sumTo(dy, small, scale)
			}
			return G.Nodes{dx}, err
		},
	}.Apply(x)
}

// broadcastKernel sums the big operand into the small one (sum) or repeats
// the small one into the big one, scaled, following the plan of the big
// one's walk.
func broadcastKernel[T Float](p bcast, scale float64, sum bool) func(Operand[T], []Operand[T]) error {
	s := T(scale)
	return func(y Operand[T], x []Operand[T]) error {
		if sum && p.rowsOnto(0) && s == 1 {
			columnSums(y.Data, x[0].Data) // a bias's gradient
			return nil
		}
		if sum {
			clear(y.Data)
			p.accumulate(0, 1, func(o int, off, st []int, n int) {
				sumRun(y.Data[off[0]:], x[0].Data[o:o+n], st[0], s)
			})
			return nil
		}
		p.parallel(1, func(o int, off, st []int, n int) {
			src := x[0].Data[off[0]:]
			for j := range y.Data[o : o+n] {
				y.Data[o+j] = s * src[j*st[0]]
			}
		})
		return nil
	}
}

// sumRun adds s·x[j] to dst[j·stride], the stride 0 (a sum into dst[0]) or
// 1; a run onto one element sums in a register.
func sumRun[T Float](dst, x []T, stride int, s T) {
	if stride == 0 {
		var acc T
		for _, v := range x {
			acc += s * v
		}
		dst[0] += acc
		return
	}
	dst = dst[:len(x)]
	if s == 1 {
		for j, v := range x {
			dst[j] += v
		}
		return
	}
	for j, v := range x {
		dst[j] += s * v
	}
}

// scaleInto writes y = s·x (y may be x).
func scaleInto[T Float](y, x []T, s T) {
	if x32, ok := any(x).([]float32); ok {
		vrow.Scale(any(y).([]float32), x32, float32(s))
		return
	}
	for j, v := range x {
		y[j] = s * v
	}
}

// AddRow writes y = a + b, for float32 with vrow's vector kernels.
func AddRow[T Float](y, a, b []T) {
	if y32, ok := any(y).([]float32); ok {
		vrow.Add(y32, any(a).([]float32), any(b).([]float32))
		return
	}
	for j := range y {
		y[j] = a[j] + b[j]
	}
}

// addInto adds x to y.
func addInto[T Float](y, x []T) { AddRow(y, y, x) }
