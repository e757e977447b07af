package graph

import (
	"fmt"
	"slices"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Reshape gives x the shape dims, which must hold as many elements; one of
// them may be -1, the size that makes up the rest. The elements keep their
// (row-major) order.
func Reshape(x *G.Node, dims ...int) (*G.Node, error) {
	shape, err := reshaped(x.Shape(), dims)
	if err != nil {
		return nil, errors.Wrap(err, "reshape")
	}
	from := x.Shape().Clone()
	return Op{
		Name:   fmt.Sprintf("reshape(%v)", shape),
		Arity:  1,
		Shape:  func([]tensor.Shape) (tensor.Shape, error) { return shape.Clone(), nil },
		F32:    Kernels[float32]{Forward: copyKernel[float32]},
		F64:    Kernels[float64]{Forward: copyKernel[float64]},
		Device: copyDevice,
		ONNX:   reshapeONNX,
		Diff:   []bool{true},
		Grad: func(_ G.Nodes, _, dy *G.Node) (G.Nodes, error) {
			dx, err := Reshape(dy, from...)
			return G.Nodes{dx}, err
		},
	}.Apply(x)
}

// reshaped is dims with its -1 resolved, checked against the size of s.
func reshaped(s tensor.Shape, dims []int) (tensor.Shape, error) {
	out := tensor.Shape(slices.Clone(dims))
	known, free := 1, -1
	for i, d := range dims {
		switch {
		case d == -1 && free < 0:
			free = i
		case d < 1:
			return nil, errors.Errorf("%v to %v: sizes must be positive, with at most one -1", s, dims)
		default:
			known *= d
		}
	}
	if free >= 0 && known > 0 && s.TotalSize()%known == 0 {
		out[free] = s.TotalSize() / known
	}
	if out.TotalSize() != s.TotalSize() || (free >= 0 && out[free] < 1) {
		return nil, errors.Errorf("%v (%d elements) to %v", s, s.TotalSize(), dims)
	}
	return out, nil
}

func copyKernel[T Float](y Operand[T], x []Operand[T]) error {
	copy(y.Data, x[0].Data)
	return nil
}

// Transpose permutes the axes of x: axis i of the output is axis perm[i] of
// x (PyTorch's permute), y[i_0, …] = x[i_perm⁻¹(0), …]. Its gradient is the
// inverse permutation of dy.
func Transpose(x *G.Node, perm ...int) (*G.Node, error) {
	s := x.Shape()
	if len(perm) != len(s) || !isPermutation(perm) {
		return nil, errors.Errorf("transpose: %v is not a permutation of the %d axes of %v", perm, len(s), s)
	}
	out := make(tensor.Shape, len(s))
	for i, p := range perm {
		out[i] = s[p]
	}
	// strides[i]: x's stride along output axis i.
	xs := s.CalcStrides()
	strides := make([]int, len(perm))
	inverse := make([]int, len(perm))
	for i, p := range perm {
		strides[i] = xs[p]
		inverse[p] = i
	}
	return Op{
		Name:   fmt.Sprintf("transpose(%v)", perm),
		Arity:  1,
		Shape:  func([]tensor.Shape) (tensor.Shape, error) { return out.Clone(), nil },
		F32:    Kernels[float32]{Forward: gatherKernel[float32](out, strides)},
		F64:    Kernels[float64]{Forward: gatherKernel[float64](out, strides)},
		Device: transposeDevice(perm),
		ONNX:   transposeONNX(perm),
		Diff:   []bool{true},
		Grad: func(_ G.Nodes, _, dy *G.Node) (G.Nodes, error) {
			dx, err := Transpose(dy, inverse...)
			return G.Nodes{dx}, err
		},
	}.Apply(x)
}

func isPermutation(p []int) bool {
	seen := make([]bool, len(p))
	for _, v := range p {
		if v < 0 || v >= len(p) || seen[v] {
			return false
		}
		seen[v] = true
	}
	return true
}

// gatherKernel writes y of shape out in order, reading x with the given
// strides along each of y's axes.
func gatherKernel[T Float](out tensor.Shape, strides []int) func(Operand[T], []Operand[T]) error {
	return func(y Operand[T], in []Operand[T]) error {
		x := in[0].Data
		last := len(out) - 1
		if last < 0 {
			copy(y.Data, x)
			return nil
		}
		n, step := out[last], strides[last]
		idx := make([]int, last)
		off := 0
		for o := 0; o < len(y.Data); o += n {
			row := y.Data[o : o+n]
			if step == 1 {
				copy(row, x[off:off+n])
			} else {
				for j := range row {
					row[j] = x[off+j*step]
				}
			}
			for a := last - 1; a >= 0; a-- {
				idx[a]++
				off += strides[a]
				if idx[a] < out[a] {
					break
				}
				off -= strides[a] * idx[a]
				idx[a] = 0
			}
		}
		return nil
	}
}

// axisOf resolves a possibly negative axis (counted from the end) of a shape
// with d dimensions.
func axisOf(axis, d int) (int, error) {
	if axis < 0 {
		axis += d
	}
	if axis < 0 || axis >= d {
		return 0, errors.Errorf("axis %d out of range for %d dimensions", axis, d)
	}
	return axis, nil
}

// blocks views shape s around axis as [outer, s[axis], inner].
func blocks(s tensor.Shape, axis int) (outer, inner int) {
	return s[:axis].TotalSize(), s[axis+1:].TotalSize()
}

// Slice is x[..., start:end, ...] along axis (negative counts from the end):
// the positions start ≤ i < end. Its gradient is dy in those positions and
// zero elsewhere.
func Slice(x *G.Node, axis, start, end int) (*G.Node, error) {
	s := x.Shape()
	a, err := axisOf(axis, len(s))
	if err != nil {
		return nil, errors.Wrapf(err, "slice of %v", s)
	}
	if start < 0 || end > s[a] || start >= end {
		return nil, errors.Errorf("slice of %v: [%d, %d) not within [0, %d) of axis %d", s, start, end, s[a], a)
	}
	out := s.Clone()
	out[a] = end - start
	outer, inner := blocks(s, a)
	// Both directions copy outer rows: n elements at offset start·inner
	// of each row of the whole, row·width of the part.
	whole, part, at := s[a]*inner, (end-start)*inner, start*inner
	return Op{
		Name:   fmt.Sprintf("slice(axis=%d,%d:%d)", a, start, end),
		Arity:  1,
		Shape:  func([]tensor.Shape) (tensor.Shape, error) { return out.Clone(), nil },
		F32:    sliceKernels[float32](outer, whole, part, at),
		F64:    sliceKernels[float64](outer, whole, part, at),
		Device: sliceDevice(outer, s[a], inner, start, end-start),
		ONNX:   sliceONNX(a, start, end),
		Diff:   []bool{true},
	}.Apply(x)
}

func sliceKernels[T Float](outer, whole, part, at int) Kernels[T] {
	return Kernels[T]{
		Forward: func(y Operand[T], x []Operand[T]) error {
			for r := range outer {
				copy(y.Data[r*part:(r+1)*part], x[0].Data[r*whole+at:])
			}
			return nil
		},
		Backward: func(_ int, dx Operand[T], _ []Operand[T], _, dy Operand[T]) error {
			clear(dx.Data)
			for r := range outer {
				copy(dx.Data[r*whole+at:r*whole+at+part], dy.Data[r*part:])
			}
			return nil
		},
	}
}

// Concat joins xs along axis (negative counts from the end); their other
// axes must agree. The gradient of each is its part of dy.
func Concat(axis int, xs ...*G.Node) (*G.Node, error) {
	if len(xs) == 0 {
		return nil, errors.New("concat: nothing to join")
	}
	s := xs[0].Shape()
	a, err := axisOf(axis, len(s))
	if err != nil {
		return nil, errors.Wrapf(err, "concat of %v", s)
	}
	out := s.Clone()
	out[a] = 0
	outer, inner := blocks(s, a)
	// parts[i], at[i]: the width of xs[i]'s rows and their offset in a row of y.
	parts, at := make([]int, len(xs)), make([]int, len(xs))
	// starts[i], sizes[i]: the same along the axis, in its positions.
	starts, sizes := make([]int, len(xs)), make([]int, len(xs))
	for i, x := range xs {
		xs := x.Shape()
		if len(xs) != len(s) || !xs[:a].Eq(s[:a]) || !xs[a+1:].Eq(s[a+1:]) {
			return nil, errors.Errorf("concat along axis %d: %v and %v differ elsewhere", a, s, xs)
		}
		parts[i], at[i] = xs[a]*inner, out[a]*inner
		starts[i], sizes[i] = out[a], xs[a]
		out[a] += xs[a]
	}
	width := out[a] * inner
	diff := make([]bool, len(xs))
	for i := range diff {
		diff[i] = true
	}
	return Op{
		Name:   fmt.Sprintf("concat(axis=%d)", a),
		Arity:  len(xs),
		Shape:  func([]tensor.Shape) (tensor.Shape, error) { return out.Clone(), nil },
		F32:    concatKernels[float32](outer, width, parts, at),
		F64:    concatKernels[float64](outer, width, parts, at),
		Device: concatDevice(outer, out[a], inner, starts, sizes),
		ONNX:   concatONNX(a),
		Diff:   diff,
	}.Apply(xs...)
}

func concatKernels[T Float](outer, width int, parts, at []int) Kernels[T] {
	return Kernels[T]{
		Forward: func(y Operand[T], xs []Operand[T]) error {
			for i, x := range xs {
				for r := range outer {
					copy(y.Data[r*width+at[i]:r*width+at[i]+parts[i]], x.Data[r*parts[i]:])
				}
			}
			return nil
		},
		Backward: func(i int, dx Operand[T], _ []Operand[T], _, dy Operand[T]) error {
			for r := range outer {
				copy(dx.Data[r*parts[i]:(r+1)*parts[i]], dy.Data[r*width+at[i]:])
			}
			return nil
		},
	}
}
