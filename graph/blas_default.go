//go:build !openblas

package graph

import blas "github.com/transformer-go/transformer/graph/internal/gemm"

// The default build multiplies matrices with graph/internal/gemm: pure Go
// with assembly kernels, no cgo.

func sgemm(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	blas.Sgemm(transA, transB, m, n, k, a, lda, b, ldb, beta, c, ldc)
}

func dgemm(transA, transB bool, m, n, k int, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	blas.Dgemm(transA, transB, m, n, k, a, lda, b, ldb, beta, c, ldc)
}

// packPays reports whether a product of m rows gains from a B packed
// beforehand: the smallest ones read B as it is.
func packPays(m int) bool { return !blas.Skinny(m) }

// packB packs op(b), [k, n], for affine (b is [k, n], or [n, k] when
// transB is set), into the memory of old, a copy packB made of another
// [k, n] op(b), when it can (old may be nil).
func packB[T Float](old any, transB bool, k, n int, b []T) any {
	ldb := n
	if transB {
		ldb = k
	}
	switch b := any(b).(type) {
	case []float32:
		pb, _ := old.(*blas.PackedB[float32])
		return blas.RepackSB(pb, transB, k, n, b, ldb)
	case []float64:
		pb, _ := old.(*blas.PackedB[float64])
		return blas.RepackDB(pb, transB, k, n, b, ldb)
	}
	return nil
}

// affine computes y = f(x·op(w) + bias) for row-major x [m, k] and y [m,
// n], op(w) [k, n] (w is [n, k] when transW is set), packed by packB as pw
// unless that is nil; f is max(·, 0) when relu is set, else the identity,
// and bias, if not nil, has n elements. The bias and f are the GEMM's
// epilogue: they cost no pass over y of their own.
func affine[T Float](transW bool, m, k, n int, x, w []T, pw any, bias []T, relu bool, y []T) {
	ldw := n
	if transW {
		ldw = k
	}
	switch y := any(y).(type) {
	case []float32:
		x, e := any(x).([]float32), blas.Epilogue[float32]{ReLU: relu}
		e.Bias, _ = any(bias).([]float32)
		if pw != nil {
			blas.SgemmPacked(false, m, x, k, pw.(*blas.PackedB[float32]), 0, y, n, e)
			return
		}
		blas.SgemmEpilogue(false, transW, m, n, k, x, k, any(w).([]float32), ldw, 0, y, n, e)
	case []float64:
		x, e := any(x).([]float64), blas.Epilogue[float64]{ReLU: relu}
		e.Bias, _ = any(bias).([]float64)
		if pw != nil {
			blas.DgemmPacked(false, m, x, k, pw.(*blas.PackedB[float64]), 0, y, n, e)
			return
		}
		blas.DgemmEpilogue(false, transW, m, n, k, x, k, any(w).([]float64), ldw, 0, y, n, e)
	}
}
