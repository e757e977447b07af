package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// TestEpilogue checks that a product with an epilogue equals, bit for bit,
// the same product followed by the bias and ReLU one element at a time, on
// every path: every implementation, the bfloat16 ones with a finishing
// kernel included, with tiny
// and default blocks (the epilogue in the kernel for whole tiles, after it
// for partial ones, in the last of several passes over k), B packed
// beforehand or not, matrix–vector products, k = 0, on several goroutines,
// and that C's padding is left alone.
func TestEpilogue(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	rng := rand.New(rand.NewPCG(21, 22))
	shapes := [][3]int{{2, 7, 5}, {3, 33, 0}, {17, 31, 40}, {100, 47, 23}, {40, 1100, 130}, {700, 60, 33}, {301, 97, 600}}
	fused := slices.DeleteFunc(bf16Impls(), func(im *impl[float32]) bool { return im.finish == nil })
	for _, im := range append(impls32(), fused...) {
		for _, s := range shapes {
			for _, relu := range []bool{false, true} {
				for _, hasBias := range []bool{false, true} {
					tc := testCase{rng.IntN(2) == 0, rng.IntN(2) == 0, s[0], s[1], s[2], rng.IntN(2) * 3, pick(rng, []float64{0, 1})}
					checkEpilogue(t, im, tc, hasBias, relu, rng)
				}
			}
		}
	}
	for _, im := range impls64() {
		checkEpilogue(t, im, testCase{false, true, 50, 70, 300, 1, 0}, true, true, rng)
	}
}

// checkEpilogue runs tc with an epilogue through im (with B packed and
// not) and through run (which takes the matrix–vector path for few rows),
// and compares each with the product without it, finished by hand.
func checkEpilogue[T float](t *testing.T, im *impl[T], tc testCase, hasBias, relu bool, rng *rand.Rand) {
	t.Helper()
	x := newMatrices[T](tc, rng)
	e := Epilogue[T]{ReLU: relu}
	if hasBias {
		e.Bias = random[T](rng, 1, tc.n, tc.n)
	}
	p := problem[T]{transA: tc.transA, transB: tc.transB, m: tc.m, n: tc.n, k: tc.k, a: x.a, lda: x.lda, b: x.b, ldb: x.ldb, beta: T(tc.beta), ldc: x.ldc}
	for name, f := range map[string]func(problem[T]){
		"blocked": im.run,
		"packed":  func(p problem[T]) { pack(im, p.transB, p.k, p.n, p.b, p.ldb).run(p) },
		"top":     func(p problem[T]) { run(im, vecFor[T](), p) },
	} {
		want, got := slices.Clone(x.c), slices.Clone(x.c)
		p.c = want
		f(p)
		finish(want, x.ldc, tc.m, tc.n, e)
		p.c, p.epi = got, e
		f(p)
		p.epi = Epilogue[T]{}
		if !sameBits(got, want) {
			t.Errorf("%s %s %v bias %t relu %t: differs from the product finished by hand", im.name, name, tc, hasBias, relu)
		}
	}
}

// vecFor returns the matrix–vector kernels of T.
func vecFor[T float]() *vecKernels[T] {
	if v, ok := any(svec).(*vecKernels[T]); ok {
		return v
	}
	return any(dvec).(*vecKernels[T])
}

// finish applies e to C one element at a time.
func finish[T float](c []T, ldc, m, n int, e Epilogue[T]) {
	for i := range m {
		for j := range n {
			v := c[i*ldc+j]
			if e.Bias != nil {
				v += e.Bias[j]
			}
			if e.ReLU && (v <= 0 || math.Signbit(float64(v))) {
				v = 0
			}
			c[i*ldc+j] = v
		}
	}
}

// sameBits reports whether a and b hold the same bits (NaNs included).
func sameBits[T float](a, b []T) bool {
	for i := range a {
		if math.Float64bits(float64(a[i])) != math.Float64bits(float64(b[i])) && !(a[i] != a[i] && b[i] != b[i]) {
			return false
		}
	}
	return len(a) == len(b)
}

// TestEpilogueBiasLength checks that a bias of the wrong length panics.
func TestEpilogueBiasLength(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("a bias of 3 for 4 columns: no panic")
		}
	}()
	s := make([]float32, 16)
	SgemmEpilogue(false, false, 4, 4, 4, s, 4, s, 4, 0, s, 4, Epilogue[float32]{Bias: make([]float32, 3)})
}

// BenchmarkEpilogue times the affine products of the small preset's layers
// (B packed, a bias and ReLU) with the epilogue in the kernel (fused) and
// as a pass over each block after it (after), for the bfloat16 GEMM and
// the float32 one, in GFLOP/s: impl/way/shape.
func BenchmarkEpilogue(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, s := range [][3]int{{1024, 256, 256}, {1024, 1024, 256}, {1024, 256, 1024}} {
		m, n, k := s[0], s[1], s[2]
		a, w, c := random[float32](rng, m, k, k), random[float32](rng, n, k, k), make([]float32, m*n)
		e := Epilogue[float32]{Bias: random[float32](rng, 1, n, n), ReLU: true}
		for _, im := range []*impl[float32]{sbf16, sgemm} {
			pb := pack(im, true, k, n, w, k)
			for _, way := range []string{"fused", "after"} {
				b.Run(fmt.Sprintf("%s/%s/%dx%dx%d", im.name, way, m, n, k), func(b *testing.B) {
					if way == "after" {
						defer func(f finishingKernel[float32]) { im.finish = f }(im.finish)
						im.finish = nil
					}
					for range b.N {
						pb.run(problem[float32]{m: m, n: n, k: k, a: a, lda: k, c: c, ldc: n, epi: e})
					}
					reportGFLOPS(b, m, n, k)
				})
			}
		}
	}
}
