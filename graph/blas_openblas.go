//go:build openblas

package graph

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/netlib/blas/netlib"
	G "gorgonia.org/gorgonia"

	ownblas "github.com/transformer-go/transformer/graph/internal/gemm"
)

// With the openblas build tag every matrix product, this package's and
// Gorgonia's, goes through the system's CBLAS (build with
// CGO_LDFLAGS=-lopenblas and Debian's libopenblas-dev). The choice is
// process-wide, as BLAS itself is.
func init() {
	impl := netlib.Implementation{}
	blas32.Use(impl)
	blas64.Use(impl)
	G.Use(impl)
}

func trans(t bool) blas.Transpose {
	if t {
		return blas.Trans
	}
	return blas.NoTrans
}

func sgemm(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	netlib.Implementation{}.Sgemm(trans(transA), trans(transB), m, n, k, 1, a, lda, b, ldb, beta, c, ldc)
}

func dgemm(transA, transB bool, m, n, k int, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	netlib.Implementation{}.Dgemm(trans(transA), trans(transB), m, n, k, 1, a, lda, b, ldb, beta, c, ldc)
}

// packPays is false: OpenBLAS packs its operands itself, at every call.
func packPays(int) bool { return false }

// packB is never called: packPays is false.
func packB[T Float](any, bool, int, int, []T) any { return nil }

// affine computes y = f(x·op(w) + bias) as the default build's does: the
// GEMM by OpenBLAS, then the same epilogue (gemm.Epilogue) in a pass of its
// own, several goroutines each taking some rows; pw is always nil (packPays
// is false).
func affine[T Float](transW bool, m, k, n int, x, w []T, _ any, bias []T, relu bool, y []T) {
	gemm(false, transW, m, n, k, x, w, y, 0)
	e := ownblas.Epilogue[T]{Bias: bias, ReLU: relu}
	forRows(y, n, func(lo, hi int) { e.Apply(y[lo*n:hi*n], n, hi-lo, n) })
}
