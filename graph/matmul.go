package graph

import (
	"fmt"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// MatMul multiplies the last axis of x by the matrix w, treating every leading
// axis of x as rows:
//
//	y[..., o] = Σ_i x[..., i] · w[i, o]        (transW false, w: [in, out])
//	y[..., o] = Σ_i x[..., i] · w[o, i]        (transW true,  w: [out, in])
//
// so x [batch, len, dModel] needs no reshape. transW lets one matrix serve as
// both the embedding [vocab, dModel] and the pre-softmax projection.
func MatMul(x, w *G.Node, transW bool) (*G.Node, error) { return matMul(x, w, nil, transW, nil) }

// Affine is MatMul(x, w, transW) plus the bias b [out] on every row, in one
// op: the product is accumulated onto rows that start as b, instead of a
// second pass over y to add it.
func Affine(x, w, b *G.Node, transW bool) (*G.Node, error) { return matMul(x, w, b, transW, nil) }

// matMul is MatMul, plus the bias b unless it is nil, whose kernel takes
// the packed copy of wp, w's parameter, while its Params are frozen (nil: it
// never does).
func matMul(x, w, b *G.Node, transW bool, wp *param) (*G.Node, error) {
	if w == nil || x == nil {
		return nil, errors.New("matmul: no x or no w")
	}
	if w.Dims() != 2 || x.Dims() < 1 {
		return nil, errors.Errorf("matmul: x %v by w %v: w must be a matrix", x.Shape(), w.Shape())
	}
	in, out := w.Shape()[0], w.Shape()[1]
	if transW {
		in, out = out, in
	}
	if lastDim(x.Shape()) != in {
		return nil, errors.Errorf("matmul: x %v by w %v (transposed: %t): inner sizes differ", x.Shape(), w.Shape(), transW)
	}
	op := Op{
		Name:  fmt.Sprintf("matmul(transW=%t)", transW),
		Arity: 2,
		Shape: func(s []tensor.Shape) (tensor.Shape, error) {
			y := s[0].Clone()
			y[len(y)-1] = out
			return y, nil
		},
		F32:  Kernels[float32]{Forward: matMulKernel[float32](transW, out, wp)},
		F64:  Kernels[float64]{Forward: matMulKernel[float64](transW, out, wp)},
		Diff: []bool{true, true},
		Grad: func(in G.Nodes, _, dy *G.Node) (G.Nodes, error) {
			// dx = dy · wᵀ: the same op with the other transpose flag.
			dx, err := MatMul(dy, in[1], !transW)
			if err != nil {
				return nil, err
			}
			dw, err := matMulGradW(in[0], dy, transW)
			if err != nil || len(in) == 2 {
				return G.Nodes{dx, dw}, err
			}
			db, err := sumTo(dy, in[2].Shape(), 1)
			return G.Nodes{dx, dw, db}, err
		},
	}
	if b == nil {
		return op.Apply(x, w)
	}
	if b.Dims() != 1 || b.Shape()[0] != out {
		return nil, errors.Errorf("affine: bias %v for %d outputs: want a vector of %d", b.Shape(), out, out)
	}
	op.Name, op.Arity, op.Diff = fmt.Sprintf("affine(transW=%t)", transW), 3, []bool{true, true, true}
	return op.Apply(x, w, b)
}

// matMulKernel is y = x·op(w) (+ b, a third input) for x of any rank, its
// leading axes as rows, with the packed copy of wp, w's parameter, when
// there is one (see Params.Freeze).
func matMulKernel[T Float](transW bool, out int, wp *param) func(Operand[T], []Operand[T]) error {
	return func(y Operand[T], x []Operand[T]) error {
		in := lastDim(x[0].Shape)
		rows := len(x[0].Data) / in
		beta := 0.0
		if len(x) == 3 {
			fillRows(y.Data, x[2].Data)
			beta = 1
		}
		if pw := packed(wp, transW, rows, in, out, x[1].Data); pw != nil {
			gemmPacked(rows, in, out, x[0].Data, pw, y.Data, beta)
			return nil
		}
		gemm(false, transW, rows, out, in, x[0].Data, x[1].Data, y.Data, beta)
		return nil
	}
}

// fillRows copies the row b into every row of y, several goroutines each
// taking some rows.
func fillRows[T Float](y, b []T) {
	forRows(y, len(b), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			copy(y[r*len(b):(r+1)*len(b)], b)
		}
	})
}

// matMulGradW is the gradient of MatMul with respect to w:
//
//	dw = xᵀ · dy  [in, out]   (transW false)
//	dw = dyᵀ · x  [out, in]   (transW true)
func matMulGradW(x, dy *G.Node, transW bool) (*G.Node, error) {
	in, out := lastDim(x.Shape()), lastDim(dy.Shape())
	shape := tensor.Shape{in, out}
	if transW {
		shape = tensor.Shape{out, in}
	}
	return Op{
		Name:  fmt.Sprintf("matmul_grad_w(transW=%t)", transW),
		Arity: 2,
		Shape: func([]tensor.Shape) (tensor.Shape, error) { return shape.Clone(), nil },
		F32:   Kernels[float32]{Forward: matMulGradWKernel[float32](transW, in, out)},
		F64:   Kernels[float64]{Forward: matMulGradWKernel[float64](transW, in, out)},
	}.Apply(x, dy)
}

func matMulGradWKernel[T Float](transW bool, in, out int) func(Operand[T], []Operand[T]) error {
	return func(dw Operand[T], t []Operand[T]) error {
		rows := len(t[0].Data) / in
		if transW {
			gemm(true, false, out, in, rows, t[1].Data, t[0].Data, dw.Data, 0)
		} else {
			gemm(true, false, in, out, rows, t[0].Data, t[1].Data, dw.Data, 0)
		}
		return nil
	}
}

// AddBias adds the vector b to every row (last axis) of x: y[..., o] = x[..., o] + b[o].
func AddBias(x, b *G.Node) (*G.Node, error) {
	if b.Dims() != 1 || lastDim(x.Shape()) != b.Shape()[0] {
		return nil, errors.Errorf("add bias: x %v plus b %v: b must be a vector of x's last size", x.Shape(), b.Shape())
	}
	return Add(x, b)
}

// gemm computes c = op(a)·op(b) + beta·c for row-major a, b, c of element type
// float32 or float64, where op(a) is [m, k] and op(b) is [k, n]. Which BLAS
// does the work depends on the build: this project's own (graph/internal/gemm)
// by default, the system's OpenBLAS with the openblas tag.
func gemm[T Float](transA, transB bool, m, n, k int, a, b, c []T, beta float64) {
	lda, ldb := k, n
	if transA {
		lda = m
	}
	if transB {
		ldb = k
	}
	gemmLD(transA, transB, m, n, k, a, lda, b, ldb, beta, c, n)
}

// gemmLD is gemm with the leading dimensions (row strides) of a, b and c
// given: matrices that are blocks of larger ones.
func gemmLD[T Float](transA, transB bool, m, n, k int, a []T, lda int, b []T, ldb int, beta float64, c []T, ldc int) {
	switch c := any(c).(type) {
	case []float32:
		sgemm(transA, transB, m, n, k, any(a).([]float32), lda, any(b).([]float32), ldb, float32(beta), c, ldc)
	case []float64:
		dgemm(transA, transB, m, n, k, any(a).([]float64), lda, any(b).([]float64), ldb, beta, c, ldc)
	}
}
