package gemm

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// benchShapes are the (m, n, k) of the products in a Transformer training
// step: projections of 1024 rows, the output layer over an 8000-word
// vocabulary, and per-head attention.
var benchShapes = [][3]int{
	{1024, 128, 128}, {1024, 512, 128}, {1024, 128, 512},
	{1024, 1000, 128}, {1024, 8000, 256}, {32, 32, 32},
}

// sgemmFunc is the signature of gonum's blas.Float32Level3.Sgemm with alpha
// fixed at 1.
type sgemmFunc func(tA, tB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int)

// benchSgemm times f on every shape and transposition, in GFLOP/s. Like
// every benchmark here whose work is split over GOMAXPROCS goroutines, it
// loops b.N times rather than with b.Loop: the testing package sets the
// GOMAXPROCS of -cpu only after a benchmark's first call, and b.Loop
// measures within that call, so -cpu 1 would time every core.
func benchSgemm(b *testing.B, f sgemmFunc) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, s := range benchShapes {
		m, n, k := s[0], s[1], s[2]
		a, bm, c := random[float32](rng, m, k, k), random[float32](rng, k, n, n), make([]float32, m*n)
		for _, mode := range []string{"NN", "NT", "TN", "TT"} {
			b.Run(fmt.Sprintf("%s/%dx%dx%d", mode, m, n, k), func(b *testing.B) { timeGEMM(b, f, mode, m, n, k, a, bm, c) })
		}
	}
}

func BenchmarkSgemm(b *testing.B) { benchSgemm(b, Sgemm) }

// BenchmarkGEMM times the float32 GEMM and the bfloat16 one (SgemmBF16)
// in turn on 1024³ and the shapes of benchShapes, with B transposed as a
// layer's weights are (NT) and as the gradients read them (NN, TN), in
// GFLOP/s: precision/mode/shape.
func BenchmarkGEMM(b *testing.B) {
	bf16 := func(tA, tB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
		SgemmBF16(tA, tB, m, n, k, a, lda, b, ldb, beta, c, ldc, Epilogue[float32]{})
	}
	rng := rand.New(rand.NewPCG(1, 1))
	for _, s := range append([][3]int{{1024, 1024, 1024}}, benchShapes...) {
		m, n, k := s[0], s[1], s[2]
		a, bm, c := random[float32](rng, m, k, k), random[float32](rng, k, n, n), make([]float32, m*n)
		for _, mode := range []string{"NT", "NN", "TN"} {
			for _, prec := range []struct {
				name string
				f    sgemmFunc
			}{{"float32", Sgemm}, {"bf16", bf16}} {
				name := fmt.Sprintf("%s/%s/%dx%dx%d", prec.name, mode, m, n, k)
				b.Run(name, func(b *testing.B) { timeGEMM(b, prec.f, mode, m, n, k, a, bm, c) })
			}
		}
	}
}

// timeGEMM times f on one product of benchSgemm's in GFLOP/s.
func timeGEMM(b *testing.B, f sgemmFunc, mode string, m, n, k int, a, bm, c []float32) {
	tA, tB := mode[0] == 'T', mode[1] == 'T'
	lda, ldb := k, n
	if tA {
		lda = m
	}
	if tB {
		ldb = k
	}
	f(tA, tB, m, n, k, a, lda, bm, ldb, 0, c, n) // fault in C's pages and fill pools
	b.ResetTimer()
	for range b.N {
		f(tA, tB, m, n, k, a, lda, bm, ldb, 0, c, n)
	}
	reportGFLOPS(b, m, n, k)
}

// reportGFLOPS reports b's speed on a product of m·n·k multiply-adds, in
// GFLOP/s.
func reportGFLOPS(b *testing.B, m, n, k int) {
	b.ReportMetric(2*float64(m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkGonumSgemm times gonum's pure-Go BLAS on the same products.
func BenchmarkGonumSgemm(b *testing.B) { benchSgemm(b, viaBLAS(gonum.Implementation{})) }

// viaBLAS adapts a BLAS implementation to sgemmFunc.
func viaBLAS(impl blas.Float32Level3) sgemmFunc {
	return func(tA, tB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
		ta, tb := blas.NoTrans, blas.NoTrans
		if tA {
			ta = blas.Trans
		}
		if tB {
			tb = blas.Trans
		}
		impl.Sgemm(ta, tb, m, n, k, 1, a, lda, b, ldb, beta, c, ldc)
	}
}

// skinnyShapes are the (m, n, k) of a decoding step's products at batch 1
// (m = 1), beam 4 (m = 4) and beyond (m = 8): the output layer over an
// 8000-word vocabulary (B transposed), the feed-forward layers (B as it
// is).
var skinnyShapes = []struct {
	transB  bool
	m, n, k int
}{
	{true, 1, 8000, 128}, {true, 4, 8000, 128}, {true, 8, 8000, 128},
	{false, 1, 512, 128}, {false, 4, 128, 512}, {false, 8, 128, 512},
}

// BenchmarkSkinny times the products of skinnyShapes as matrix–vector
// products (vec), with the packing GEMM (gemm) and with the GEMM given B
// packed beforehand (packed), in float32 and float64.
func BenchmarkSkinny(b *testing.B) {
	benchSkinny(b, "float32", svec, sgemm)
	benchSkinny(b, "float64", dvec, dgemm)
}

func benchSkinny[T float](b *testing.B, dtype string, v *vecKernels[T], im *impl[T]) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, s := range skinnyShapes {
		x, w, c := random[T](rng, s.m, s.k, s.k), random[T](rng, s.k, s.n, s.n), make([]T, s.m*s.n)
		ldb := s.n
		if s.transB {
			ldb = s.k
		}
		p := problem[T]{transB: s.transB, m: s.m, n: s.n, k: s.k, a: x, lda: s.k, b: w, ldb: ldb, c: c, ldc: s.n}
		pb := pack(im, s.transB, s.k, s.n, w, ldb)
		for name, run := range map[string]func(problem[T]){"vec": v.run, "gemm": im.run, "packed": pb.run} {
			b.Run(fmt.Sprintf("%s/%s/transB=%t/%dx%dx%d", dtype, name, s.transB, s.m, s.n, s.k), func(b *testing.B) {
				for range b.N {
					run(p)
				}
				reportGFLOPS(b, s.m, s.n, s.k)
			})
		}
	}
}

// thresholdShapes are the (m, n, k) BenchmarkBF16Threshold times: cubes,
// and products of 1024 rows with a narrow or a short other side.
var thresholdShapes = [][3]int{
	{8, 8, 8}, {12, 12, 12}, {16, 16, 16}, {32, 32, 32}, {48, 48, 48}, {64, 64, 64}, {96, 96, 96}, {128, 128, 128}, {192, 192, 192}, {256, 256, 256},
	{1024, 16, 128}, {1024, 32, 128}, {1024, 64, 128}, {1024, 128, 16}, {1024, 128, 32}, {1024, 128, 64},
	{32, 1024, 128}, {64, 1024, 128}, {32, 32, 8}, {5, 32, 32}, {8, 512, 128}, {8, 8000, 128},
}

// BenchmarkBF16Threshold times the float32 GEMM and the bfloat16 one
// without the threshold that sends small products to float32 (BF16Pays)
// in turn, in GFLOP/s: the measurement that threshold comes from
// (docs/bf16.md).
func BenchmarkBF16Threshold(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	bf16 := func(tA, tB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
		sbf16.run(problem[float32]{transA: tA, transB: tB, m: m, n: n, k: k, a: a, lda: lda, b: b, ldb: ldb, beta: beta, c: c, ldc: ldc})
	}
	for _, s := range thresholdShapes {
		m, n, k := s[0], s[1], s[2]
		a, bm, c := random[float32](rng, m, k, k), random[float32](rng, k, n, n), make([]float32, m*n)
		for _, mode := range []string{"NT", "NN", "TN"} {
			for _, prec := range []struct {
				name string
				f    sgemmFunc
			}{{"float32", Sgemm}, {"bf16", bf16}} {
				b.Run(fmt.Sprintf("%s/%s/%dx%dx%d", prec.name, mode, m, n, k), func(b *testing.B) { timeGEMM(b, prec.f, mode, m, n, k, a, bm, c) })
			}
		}
	}
}
