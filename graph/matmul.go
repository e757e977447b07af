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
func MatMul(x, w *G.Node, transW bool) (*G.Node, error) { return matMul(x, w, transW, nil) }

// matMul is MatMul whose kernel takes the packed copy of wp, w's
// parameter, while its Params are frozen (nil: it never does).
func matMul(x, w *G.Node, transW bool, wp *param) (*G.Node, error) {
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
	return Op{
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
			return G.Nodes{dx, dw}, err
		},
	}.Apply(x, w)
}

// matMulKernel is y = x·op(w) for x of any rank, its leading axes as rows,
// with the packed copy of wp, w's parameter, when there is one (see
// Params.Freeze).
func matMulKernel[T Float](transW bool, out int, wp *param) func(Operand[T], []Operand[T]) error {
	return func(y Operand[T], x []Operand[T]) error {
		in := lastDim(x[0].Shape)
		rows := len(x[0].Data) / in
		if pw := packed(wp, transW, rows, in, out, x[1].Data); pw != nil {
			gemmPacked(rows, in, out, x[0].Data, pw, y.Data)
			return nil
		}
		gemm(false, transW, rows, out, in, x[0].Data, x[1].Data, y.Data, 0)
		return nil
	}
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
	switch c := any(c).(type) {
	case []float32:
		sgemm(transA, transB, m, n, k, any(a).([]float32), lda, any(b).([]float32), ldb, float32(beta), c, n)
	case []float64:
		dgemm(transA, transB, m, n, k, any(a).([]float64), lda, any(b).([]float64), ldb, beta, c, n)
	}
}
