package gemm

import (
	"fmt"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

func threadCPU() float64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	return float64(ts.Sec) + float64(ts.Nsec)*1e-9
}

func benchKernel(b *testing.B, mr, nr, kc int, f microKernel[float32]) {
	a := make([]float32, mr*kc)
	bb := make([]float32, nr*kc)
	c := make([]float32, mr*nr)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t0 := threadCPU()
	for b.Loop() {
		f(kc, &a[0], &bb[0], &c[0], nr, true)
	}
	b.ReportMetric(2*float64(mr*nr*kc)*float64(b.N)/(threadCPU()-t0)/1e9, "GFLOP/s")
}

func BenchmarkTmpKernel6x16(b *testing.B)  { benchKernel(b, 6, 16, 256, sgemmKernel6x16) }
func BenchmarkTmpKernel12x32(b *testing.B) { benchKernel(b, 12, 32, 256, sgemmKernel12x32) }

func BenchmarkTmpTune(b *testing.B) {
	src := sgemm
	if os.Getenv("IMPL") == "avx2" {
		src = avx2Sgemm
	}
	if os.Getenv("IMPL") == "go" {
		src = goSgemm
	}
	im := &impl[float32]{name: "t", mr: src.mr, nr: src.nr, mc: src.mc, kc: src.kc, nc: src.nc, kernel: src.kernel, gather: src.gather, scatter: src.scatter}
	if v := os.Getenv("MC"); v != "" {
		im.mc, _ = strconv.Atoi(v)
	}
	if v := os.Getenv("KC"); v != "" {
		im.kc, _ = strconv.Atoi(v)
	}
	if v := os.Getenv("NC"); v != "" {
		im.nc, _ = strconv.Atoi(v)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	for _, s := range append(benchShapes, [3]int{1024, 256, 8000}, [3]int{256, 8000, 1024}) {
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
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				im.serial(problem[float32]{tA, tB, m, n, k, a, lda, bm, ldb, 0, c, n})
				t0 := threadCPU()
				for b.Loop() {
					im.serial(problem[float32]{tA, tB, m, n, k, a, lda, bm, ldb, 0, c, n})
				}
				b.ReportMetric(2*float64(m*n*k)*float64(b.N)/(threadCPU()-t0)/1e9, "GFLOP/s")
			})
		}
	}
}

func BenchmarkTmpSmall(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, s := range [][3]int{{32, 32, 32}, {16, 16, 16}, {64, 64, 64}, {32, 128, 32}} {
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
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				t0 := threadCPU()
				for b.Loop() {
					Sgemm(tA, tB, m, n, k, a, lda, bm, ldb, 0, c, n)
				}
				b.ReportMetric(2*float64(m*n*k)*float64(b.N)/(threadCPU()-t0)/1e9, "GFLOP/s")
			})
		}
	}
}

func BenchmarkTmpD(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, s := range [][3]int{{32, 32, 32}, {256, 256, 256}} {
		m, n, k := s[0], s[1], s[2]
		a, bm, c := random[float64](rng, m, k, k), random[float64](rng, k, n, n), make([]float64, m*n)
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
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				t0 := threadCPU()
				for b.Loop() {
					Dgemm(tA, tB, m, n, k, a, lda, bm, ldb, 0, c, n)
				}
				b.ReportMetric(2*float64(m*n*k)*float64(b.N)/(threadCPU()-t0)/1e9, "GFLOP/s")
			})
			b.Run(fmt.Sprintf("gonum/%s/%dx%dx%d", mode, m, n, k), func(b *testing.B) {
				ta, tb := blas.NoTrans, blas.NoTrans
				if tA {
					ta = blas.Trans
				}
				if tB {
					tb = blas.Trans
				}
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				t0 := threadCPU()
				for b.Loop() {
					gonum.Implementation{}.Dgemm(ta, tb, m, n, k, 1, a, lda, bm, ldb, 0, c, n)
				}
				b.ReportMetric(2*float64(m*n*k)*float64(b.N)/(threadCPU()-t0)/1e9, "GFLOP/s")
			})
		}
	}
}

func BenchmarkTmpPar(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, s := range [][3]int{{48, 48, 48}, {64, 64, 64}, {96, 96, 96}, {128, 128, 128}, {256, 64, 64}} {
		m, n, k := s[0], s[1], s[2]
		a, bm, c := random[float32](rng, m, k, k), random[float32](rng, k, n, n), make([]float32, m*n)
		b.Run(fmt.Sprintf("%dx%dx%d", m, n, k), func(b *testing.B) {
			for b.Loop() {
				sgemm.parallel(problem[float32]{false, true, m, n, k, a, k, bm, k, 0, c, n})
			}
			b.ReportMetric(2*float64(m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
