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
func MatMul(x, w *G.Node, transW bool) (*G.Node, error) {
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
	op := &kernelOp{
		name:  fmt.Sprintf("matmul(transW=%t)", transW),
		arity: 2,
		sig:   signature(tensorType(x.Dims()), tensorType(x.Dims()), tensorType(2)),
		shape: func(s []tensor.Shape) (tensor.Shape, error) {
			y := s[0].Clone()
			y[len(y)-1] = out
			return y, nil
		},
		diffWRT: []bool{true, true},
	}
	op.forward = func(y *tensor.Dense, in []*tensor.Dense) error {
		rows := in[0].Shape().TotalSize() / lastDim(in[0].Shape())
		gemm(false, transW, rows, out, lastDim(in[0].Shape()), in[0].Data(), in[1].Data(), y.Data(), 0)
		return nil
	}
	op.diff = func(in G.Nodes, _, dy *G.Node) (G.Nodes, error) {
		// dx = dy · wᵀ: the same op with the other transpose flag.
		dx, err := MatMul(dy, in[1], !transW)
		if err != nil {
			return nil, err
		}
		dw, err := matMulGradW(in[0], dy, transW)
		return G.Nodes{dx, dw}, err
	}
	return apply(op, x, w)
}

// matMulGradW is the gradient of MatMul with respect to w:
//
//	dw = xᵀ · dy  [in, out]   (transW false)
//	dw = dyᵀ · x  [out, in]   (transW true)
func matMulGradW(x, dy *G.Node, transW bool) (*G.Node, error) {
	in, out := lastDim(x.Shape()), lastDim(dy.Shape())
	op := &kernelOp{
		name:  fmt.Sprintf("matmul_grad_w(transW=%t)", transW),
		arity: 2,
		sig:   signature(tensorType(2), tensorType(x.Dims()), tensorType(dy.Dims())),
		shape: func([]tensor.Shape) (tensor.Shape, error) {
			if transW {
				return tensor.Shape{out, in}, nil
			}
			return tensor.Shape{in, out}, nil
		},
	}
	op.forward = func(dw *tensor.Dense, t []*tensor.Dense) error {
		rows := t[0].Shape().TotalSize() / in
		if transW {
			gemm(true, false, out, in, rows, t[1].Data(), t[0].Data(), dw.Data(), 0)
		} else {
			gemm(true, false, in, out, rows, t[0].Data(), t[1].Data(), dw.Data(), 0)
		}
		return nil
	}
	return apply(op, x, dy)
}

// AddBias adds the vector b to every row (last axis) of x: y[..., o] = x[..., o] + b[o].
func AddBias(x, b *G.Node) (*G.Node, error) {
	if b.Dims() != 1 || lastDim(x.Shape()) != b.Shape()[0] {
		return nil, errors.Errorf("add bias: x %v plus b %v: b must be a vector of x's last size", x.Shape(), b.Shape())
	}
	op := &kernelOp{
		name:    "add_bias",
		arity:   2,
		sig:     signature(tensorType(x.Dims()), tensorType(x.Dims()), tensorType(1)),
		shape:   sameShape,
		diffWRT: []bool{true, true},
	}
	op.forward = func(y *tensor.Dense, in []*tensor.Dense) error {
		switch yd := y.Data().(type) {
		case []float32:
			addRows(yd, in[0].Data().([]float32), in[1].Data().([]float32))
		case []float64:
			addRows(yd, in[0].Data().([]float64), in[1].Data().([]float64))
		}
		return nil
	}
	op.diff = func(_ G.Nodes, _, dy *G.Node) (G.Nodes, error) {
		db, err := SumRows(dy)
		return G.Nodes{dy, db}, err
	}
	return apply(op, x, b)
}

// SumRows sums x over every axis but the last: y[o] = Σ_rows x[..., o].
func SumRows(x *G.Node) (*G.Node, error) {
	n := lastDim(x.Shape())
	op := &kernelOp{
		name:  "sum_rows",
		arity: 1,
		sig:   signature(tensorType(1), tensorType(x.Dims())),
		shape: func([]tensor.Shape) (tensor.Shape, error) { return tensor.Shape{n}, nil },
	}
	op.forward = func(y *tensor.Dense, in []*tensor.Dense) error {
		switch yd := y.Data().(type) {
		case []float32:
			sumRows(yd, in[0].Data().([]float32))
		case []float64:
			sumRows(yd, in[0].Data().([]float64))
		}
		return nil
	}
	return apply(op, x)
}

func addRows[T float](y, x, b []T) {
	n := len(b)
	for r := 0; r < len(x); r += n {
		yr, xr := y[r:r+n], x[r:r+n]
		for j, v := range b {
			yr[j] = xr[j] + v
		}
	}
}

func sumRows[T float](y, x []T) {
	n := len(y)
	clear(y)
	for r := 0; r < len(x); r += n {
		for j, v := range x[r : r+n] {
			y[j] += v
		}
	}
}

// gemm computes c = op(a)·op(b) + beta·c for row-major a, b, c of element type
// float32 or float64, where op(a) is [m, k] and op(b) is [k, n]. Which BLAS
// does the work depends on the build: this project's own (graph/internal/gemm)
// by default, the system's OpenBLAS with the openblas tag.
func gemm(transA, transB bool, m, n, k int, a, b, c any, beta float64) {
	lda, ldb := k, n
	if transA {
		lda = m
	}
	if transB {
		ldb = k
	}
	if cd, ok := c.([]float32); ok {
		sgemm(transA, transB, m, n, k, a.([]float32), lda, b.([]float32), ldb, float32(beta), cd, n)
		return
	}
	dgemm(transA, transB, m, n, k, a.([]float64), lda, b.([]float64), ldb, beta, c.([]float64), n)
}
