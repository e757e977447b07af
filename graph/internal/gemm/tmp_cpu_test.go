package gemm

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"

	"gonum.org/v1/gonum/blas/gonum"
)

func procCPU() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)*1e-6
}

func benchSgemmCPU(b *testing.B, f sgemmFunc) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, s := range benchShapes {
		m, n, k := s[0], s[1], s[2]
		a, bm, c := random[float32](rng, m, k, k), random[float32](rng, k, n, n), make([]float32, m*n)
		for _, mode := range []string{"NN", "NT", "TN", "TT"} {
			tA, tB := mode[0] == 'T', mode[1] == 'T'
			lda, ldb := k, n
			if tA {
				lda = m
			}
			if tB {
				ldb = k
			}
			b.Run(fmt.Sprintf("%s/%dx%dx%d", mode, m, n, k), func(b *testing.B) {
				f(tA, tB, m, n, k, a, lda, bm, ldb, 0, c, n)
				t0 := procCPU()
				for b.Loop() {
					f(tA, tB, m, n, k, a, lda, bm, ldb, 0, c, n)
				}
				b.ReportMetric(2*float64(m*n*k)*float64(b.N)/(procCPU()-t0)/1e9, "GFLOP/s")
			})
		}
	}
}

func BenchmarkTmpCPUMine(b *testing.B)  { benchSgemmCPU(b, Sgemm) }
func BenchmarkTmpCPUGonum(b *testing.B) { benchSgemmCPU(b, viaBLAS(gonum.Implementation{})) }
