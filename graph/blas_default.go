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

// packB packs op(b), [k, n], for gemmPacked (b is [k, n], or [n, k] when
// transB is set).
func packB[T Float](transB bool, k, n int, b []T) any {
	ldb := n
	if transB {
		ldb = k
	}
	switch b := any(b).(type) {
	case []float32:
		return blas.PackSB(transB, k, n, b, ldb)
	case []float64:
		return blas.PackDB(transB, k, n, b, ldb)
	}
	return nil
}

// gemmPacked computes c = a·op(b) + beta·c for row-major a [m, k] and c
// [m, n], with op(b) packed by packB.
func gemmPacked[T Float](m, k, n int, a []T, pb any, c []T, beta float64) {
	switch c := any(c).(type) {
	case []float32:
		blas.SgemmPacked(false, m, any(a).([]float32), k, pb.(*blas.PackedB[float32]), float32(beta), c, n)
	case []float64:
		blas.DgemmPacked(false, m, any(a).([]float64), k, pb.(*blas.PackedB[float64]), beta, c, n)
	}
}
