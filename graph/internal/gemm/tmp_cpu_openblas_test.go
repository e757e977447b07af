//go:build openblas && cgo

package gemm

import (
	"testing"

	"gonum.org/v1/netlib/blas/netlib"
)

func BenchmarkTmpCPUOpenBLAS(b *testing.B) { benchSgemmCPU(b, viaBLAS(netlib.Implementation{})) }
