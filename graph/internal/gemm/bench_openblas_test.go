//go:build openblas && cgo

package gemm

import (
	"testing"

	"gonum.org/v1/netlib/blas/netlib"
)

// BenchmarkOpenBLASSgemm times the system's CBLAS on the same products as
// BenchmarkSgemm. Run it with
//
//	CGO_LDFLAGS=-lopenblas go test -tags openblas -bench OpenBLAS
func BenchmarkOpenBLASSgemm(b *testing.B) { benchSgemm(b, viaBLAS(netlib.Implementation{})) }
