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
