package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
)

// variants returns im together with a copy using tiny cache blocks, so that
// small products go through every blocking loop several times.
func variants[T float](im *impl[T]) []*impl[T] {
	tiny := &impl[T]{name: im.name + "-tiny", mr: im.mr, nr: im.nr,
		mc: 2 * im.mr, kc: 11, nc: 3 * im.nr, kernel: im.kernel, finish: im.finish, gather: im.gather, scatter: im.scatter, panels: im.panels,
		rows: im.rows, short: im.short}
	return []*impl[T]{im, tiny}
}

// impls32 and impls64 are the implementations this machine can run, each
// also with tiny blocks.
func impls32() []*impl[float32] { return allVariants(sgemms) }
func impls64() []*impl[float64] { return allVariants(dgemms) }

func allVariants[T float](ims []*impl[T]) []*impl[T] {
	var all []*impl[T]
	for _, im := range ims {
		all = append(all, variants(im)...)
	}
	return all
}

// testCase is one product to check; pad is added to every leading dimension.
type testCase struct {
	transA, transB bool
	m, n, k, pad   int
	beta           float64
}

func (tc testCase) String() string {
	return fmt.Sprintf("tA=%t tB=%t m=%d n=%d k=%d pad=%d beta=%g", tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.pad, tc.beta)
}

// matrices holds the operands of a test case and the reference result.
type matrices[T float] struct {
	a, b, c       []T
	lda, ldb, ldc int
	want, bound   []float64
}

// newMatrices fills A, B and C with random values (C with NaN where beta is
// 0, and with a sentinel in its padding) and computes the expected result
// in float64 with a worst-case rounding bound per element:
//
//	|C - want| ≤ (k+2)·u·(Σ_p |a_ip·b_pj| + |beta·c_ij|) · 2
//
// where u is the unit roundoff of T; the factor 2 covers the reference's own
// rounding when T is float64.
func newMatrices[T float](tc testCase, rng *rand.Rand) *matrices[T] {
	return newMatricesOf[T](tc, rng, nil)
}

// newMatricesOf is newMatrices for a product that multiplies f(a) by f(b)
// element by element (nil f: the identity), such as bfloat16's rounding.
func newMatricesOf[T float](tc testCase, rng *rand.Rand, f func(T) T) *matrices[T] {
	if f == nil {
		f = func(x T) T { return x }
	}
	ar, ac, br, bc := tc.m, tc.k, tc.k, tc.n
	if tc.transA {
		ar, ac = ac, ar
	}
	if tc.transB {
		br, bc = bc, br
	}
	x := &matrices[T]{lda: max(1, ac) + tc.pad, ldb: max(1, bc) + tc.pad, ldc: max(1, tc.n) + tc.pad}
	x.a = random[T](rng, ar, ac, x.lda)
	x.b = random[T](rng, br, bc, x.ldb)
	x.c = random[T](rng, tc.m, tc.n, x.ldc)
	x.want = make([]float64, tc.m*tc.n)
	x.bound = make([]float64, tc.m*tc.n)
	u := math.Pow(2, -53)
	if _, ok := any(T(0)).(float32); ok {
		u = math.Pow(2, -24)
	}
	for i := range tc.m {
		for j := range tc.n {
			var sum, abs float64
			for p := range tc.k {
				ia, ib := i*x.lda+p, p*x.ldb+j
				if tc.transA {
					ia = p*x.lda + i
				}
				if tc.transB {
					ib = j*x.ldb + p
				}
				ap, bp := float64(f(x.a[ia])), float64(f(x.b[ib]))
				sum += ap * bp
				abs += math.Abs(ap * bp)
			}
			if tc.beta != 0 {
				bc := tc.beta * float64(x.c[i*x.ldc+j])
				sum += bc
				abs += math.Abs(bc)
			} else {
				x.c[i*x.ldc+j] = T(math.NaN())
			}
			x.want[i*tc.n+j] = sum
			x.bound[i*tc.n+j] = 2 * float64(tc.k+2) * u * abs
		}
	}
	return x
}

// sentinel fills the padding of C; gemm must leave it alone.
const sentinel = 12345

// random returns a rows×cols matrix with leading dimension ld whose elements
// are uniform in [-1, 1) and whose padding holds sentinel.
func random[T float](rng *rand.Rand, rows, cols, ld int) []T {
	x := make([]T, rows*ld)
	for i := range x {
		x[i] = sentinel
		if i%ld < cols {
			x[i] = T(2*rng.Float64() - 1)
		}
	}
	return x
}

// check runs tc through im and reports elements off by more than their bound
// and padding of C that changed.
func check[T float](t *testing.T, im *impl[T], tc testCase, rng *rand.Rand) {
	t.Helper()
	checkWith(t, im.name, im.run, tc, rng)
}

// checkWith is check for any function that computes a problem; name names
// it in messages.
func checkWith[T float](t *testing.T, name string, run func(problem[T]), tc testCase, rng *rand.Rand) {
	t.Helper()
	checkOf(t, name, run, tc, rng, nil)
}

// checkOf is checkWith for a product of f(a) and f(b) (newMatricesOf).
func checkOf[T float](t *testing.T, name string, run func(problem[T]), tc testCase, rng *rand.Rand, f func(T) T) {
	t.Helper()
	x := newMatricesOf[T](tc, rng, f)
	run(problem[T]{transA: tc.transA, transB: tc.transB, m: tc.m, n: tc.n, k: tc.k, a: x.a, lda: x.lda, b: x.b, ldb: x.ldb, beta: T(tc.beta), c: x.c, ldc: x.ldc})
	bad := 0
	for i := range x.c {
		r, j := i/x.ldc, i%x.ldc
		var ok bool
		if j < tc.n {
			got, want := float64(x.c[i]), x.want[r*tc.n+j]
			ok = math.Abs(got-want) <= x.bound[r*tc.n+j]
		} else {
			ok = x.c[i] == sentinel
		}
		if !ok {
			if bad++; bad <= 3 {
				t.Errorf("%s %v: c[%d,%d] = %g", name, tc, r, j, x.c[i])
			}
		}
	}
}

// sizes are matrix sizes around the tile and block sizes of every kernel.
var sizes = []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 15, 16, 17, 23, 24, 25, 31, 32, 33, 47, 64, 100}

func TestSgemm(t *testing.T) { testGemm(t, impls32()) }
func TestDgemm(t *testing.T) { testGemm(t, impls64()) }

func testGemm[T float](t *testing.T, ims []*impl[T]) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, im := range ims {
		for _, tA := range []bool{false, true} {
			for _, tB := range []bool{false, true} {
				for range 150 {
					tc := testCase{tA, tB, pick(rng, sizes), pick(rng, sizes), pick(rng, sizes),
						pick(rng, []int{0, 0, 3}), pick(rng, []float64{0, 1, -0.5})}
					check(t, im, tc, rng)
				}
			}
		}
	}
}

// TestLarge checks products bigger than the default blocks, on several
// goroutines.
func TestLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("large products")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []testCase{
		{false, true, 300, 97, 600, 0, 0},
		{true, false, 97, 300, 513, 2, 1},
		{false, false, 150, 4200, 3, 1, 0.5},
		{true, true, 290, 310, 257, 0, 0},
	} {
		for _, im := range sgemms {
			check(t, im, tc, rng)
		}
		for _, im := range dgemms {
			check(t, im, tc, rng)
		}
	}
}

// TestConcurrent checks large products run from several goroutines at once,
// which compete for the helpers.
func TestConcurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("large products")
	}
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 6))
			for range 4 {
				tc := testCase{rng.IntN(2) == 0, rng.IntN(2) == 0, 100 + rng.IntN(200), 100 + rng.IntN(200), 50 + rng.IntN(100), 0, 0}
				check(t, sgemm, tc, rng)
			}
		})
	}
	wg.Wait()
}

// TestEmpty checks that k = 0 scales C by beta and that m or n = 0 is a no-op.
func TestEmpty(t *testing.T) {
	c := []float32{1, 2, math.Float32frombits(0x7fc00000), 4}
	Sgemm(false, false, 2, 2, 0, nil, 1, nil, 2, 0, c, 2)
	if c[0] != 0 || c[2] != 0 {
		t.Errorf("beta 0, k 0: c = %v, want zeros", c)
	}
	d := []float64{1, 2, 3, 4}
	Dgemm(true, true, 2, 2, 0, nil, 2, nil, 1, 2, d, 2)
	if d[3] != 8 {
		t.Errorf("beta 2, k 0: c = %v, want doubled", d)
	}
	Sgemm(false, false, 0, 3, 4, nil, 4, make([]float32, 12), 3, 0, nil, 3)
	Sgemm(false, false, 3, 0, 4, make([]float32, 12), 4, nil, 1, 0, nil, 1)
}

// TestPanics checks that bad arguments panic rather than read or write out
// of bounds.
func TestPanics(t *testing.T) {
	s := make([]float32, 16)
	for name, f := range map[string]func(){
		"negative": func() { Sgemm(false, false, -1, 2, 2, s, 2, s, 2, 0, s, 2) },
		"lda":      func() { Sgemm(false, false, 2, 2, 3, s, 2, s, 2, 0, s, 2) },
		"ldb":      func() { Sgemm(false, true, 2, 2, 3, s, 3, s, 2, 0, s, 2) },
		"short a":  func() { Sgemm(true, false, 4, 2, 5, s, 4, s, 2, 0, s, 2) },
		"short c":  func() { Sgemm(false, false, 4, 5, 1, s, 1, s, 5, 0, s, 5) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

// FuzzSgemm checks random shapes, transpositions and betas against the
// reference.
func FuzzSgemm(f *testing.F) {
	f.Add(uint8(6), uint8(16), uint8(1), uint8(0), uint64(1))
	f.Add(uint8(33), uint8(17), uint8(70), uint8(7), uint64(2))
	f.Fuzz(func(t *testing.T, m, n, k, flags uint8, seed uint64) {
		rng := rand.New(rand.NewPCG(seed, 5))
		tc := testCase{flags&1 != 0, flags&2 != 0, int(m), int(n), int(k),
			int(flags>>2) & 3, []float64{0, 1, 0.5, -2}[flags>>4&3]}
		for _, im := range impls32() {
			check(t, im, tc, rng)
		}
	})
}

func pick[E any](rng *rand.Rand, xs []E) E { return xs[rng.IntN(len(xs))] }

// vecKernels32 and vecKernels64 are the matrix–vector kernels this machine
// can run.
func vecKernels32() []*vecKernels[float32] {
	return slices.Compact([]*vecKernels[float32]{goVec32, svec})
}
func vecKernels64() []*vecKernels[float64] {
	return slices.Compact([]*vecKernels[float64]{goVec64, dvec})
}

func TestSgemv(t *testing.T) { testGemv(t, vecKernels32()) }
func TestDgemv(t *testing.T) { testGemv(t, vecKernels64()) }

// testGemv checks the matrix–vector kernels on products of 1 to
// maxSkinnyRows rows against the reference, over sizes around their
// register blocks and cache blocks (k from 1 to 700 makes B's blocks of
// l1Bytes hold from 1 to hundreds of columns).
func testGemv[T float](t *testing.T, vs []*vecKernels[T]) {
	rng := rand.New(rand.NewPCG(7, 8))
	ks := append(slices.Clone(sizes), 127, 128, 129, 255, 700)
	ns := append(slices.Clone(sizes), 127, 128, 129, 1000, 2051)
	for _, v := range vs {
		for _, tA := range []bool{false, true} {
			for _, tB := range []bool{false, true} {
				for range 120 {
					tc := testCase{tA, tB, 1 + rng.IntN(maxSkinnyRows), pick(rng, ns), pick(rng, ks),
						pick(rng, []int{0, 0, 3}), pick(rng, []float64{0, 1, -0.5})}
					checkWith(t, v.name, v.run, tc, rng)
				}
			}
		}
	}
}

// TestSkinnyDispatch checks that Sgemm and Dgemm send products of up to
// maxSkinnyRows rows to the matrix–vector kernels and still get them right.
func TestSkinnyDispatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for m := range maxSkinnyRows + 2 {
		tc := testCase{false, true, m, 37, 41, 1, 0.5}
		if p := (problem[float32]{m: tc.m, n: tc.n, k: tc.k}); p.skinny() != (m >= 1 && m <= maxSkinnyRows) {
			t.Errorf("m=%d: skinny is %t", m, p.skinny())
		}
		checkWith(t, "Sgemm", func(p problem[float32]) {
			Sgemm(p.transA, p.transB, p.m, p.n, p.k, p.a, p.lda, p.b, p.ldb, p.beta, p.c, p.ldc)
		}, tc, rng)
		checkWith(t, "Dgemm", func(p problem[float64]) {
			Dgemm(p.transA, p.transB, p.m, p.n, p.k, p.a, p.lda, p.b, p.ldb, p.beta, p.c, p.ldc)
		}, tc, rng)
	}
}

func TestPackedSgemm(t *testing.T) { testPacked(t, impls32()) }
func TestPackedDgemm(t *testing.T) { testPacked(t, impls64()) }

// testPacked checks products with a B packed beforehand against the
// reference, on one goroutine and (for the larger ones) several, where C is
// split into bands of rows or of columns.
func testPacked[T float](t *testing.T, ims []*impl[T]) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	rng := rand.New(rand.NewPCG(11, 12))
	large := []testCase{{false, true, 40, 1100, 130, 0, 0}, {true, false, 700, 60, 33, 1, 1}}
	for _, im := range ims {
		run := func(p problem[T]) {
			pb := pack(im, p.transB, p.k, p.n, p.b, p.ldb)
			p.b, p.ldb = nil, 0 // a packed product must not read B
			pb.run(p)
		}
		for _, tA := range []bool{false, true} {
			for _, tB := range []bool{false, true} {
				for range 60 {
					tc := testCase{tA, tB, pick(rng, sizes), pick(rng, sizes), pick(rng, sizes),
						pick(rng, []int{0, 0, 3}), pick(rng, []float64{0, 1, -0.5})}
					checkWith(t, im.name+"-packed", run, tc, rng)
				}
			}
		}
		for _, tc := range large {
			checkWith(t, im.name+"-packed", run, tc, rng)
		}
	}
}

// TestPackedExported checks SgemmPacked and DgemmPacked, and that PackSB
// refuses a B that does not fit its slice.
func TestPackedExported(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	tc := testCase{false, true, 9, 70, 33, 0, 0.5}
	checkWith(t, "SgemmPacked", func(p problem[float32]) {
		SgemmPacked(p.transA, p.m, p.a, p.lda, PackSB(p.transB, p.k, p.n, p.b, p.ldb), p.beta, p.c, p.ldc, Epilogue[float32]{})
	}, tc, rng)
	checkWith(t, "DgemmPacked", func(p problem[float64]) {
		DgemmPacked(p.transA, p.m, p.a, p.lda, PackDB(p.transB, p.k, p.n, p.b, p.ldb), p.beta, p.c, p.ldc, Epilogue[float64]{})
	}, tc, rng)
	defer func() {
		if recover() == nil {
			t.Error("PackSB of a short B: no panic")
		}
	}()
	PackSB(true, 4, 5, make([]float32, 19), 4)
}

// TestRepackFloat checks that RepackSB and RepackDB pack a new B into the
// memory of a copy of the same sizes, which then computes products with
// the new B, and make a new copy for other sizes.
func TestRepackFloat(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	const k, n = 33, 70
	tc := testCase{false, true, 9, n, k, 0, 0.5}
	s := PackSB(true, k, n, random[float32](rng, n, k, k), k)
	d := PackDB(true, k, n, random[float64](rng, n, k, k), k)
	checkWith(t, "RepackSB", func(p problem[float32]) {
		if RepackSB(s, p.transB, p.k, p.n, p.b, p.ldb) != s {
			t.Fatal("RepackSB: a copy of the same sizes was not reused")
		}
		SgemmPacked(p.transA, p.m, p.a, p.lda, s, p.beta, p.c, p.ldc, Epilogue[float32]{})
	}, tc, rng)
	checkWith(t, "RepackDB", func(p problem[float64]) {
		if RepackDB(d, p.transB, p.k, p.n, p.b, p.ldb) != d {
			t.Fatal("RepackDB: a copy of the same sizes was not reused")
		}
		DgemmPacked(p.transA, p.m, p.a, p.lda, d, p.beta, p.c, p.ldc, Epilogue[float64]{})
	}, tc, rng)
	if other := RepackSB(s, true, k-1, n, make([]float32, n*(k-1)), k-1); other == s || other.k != k-1 {
		t.Error("RepackSB: a copy of other sizes was reused")
	}
}

// TestParallelEqualsSerial checks that products split among goroutines, by
// rows (B packed a block at a time for all the bands, or beforehand) or by
// columns, equal the same products on one goroutine bit for bit, at several
// GOMAXPROCS and betas, with and without a bias and ReLU, in float32 and
// with bfloat16 products.
func TestParallelEqualsSerial(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, s := range [][5]int{ // transA, transB, m, n, k
		{0, 1, 301, 97, 600}, {0, 1, 800, 300, 257}, {1, 0, 250, 131, 513}, {0, 0, 90, 700, 40}, {1, 1, 290, 310, 257}, {0, 1, 1024, 128, 128}, {0, 1, 200, 2100, 64}, {1, 0, 400, 4200, 30}, {1, 0, 2500, 40, 33}, {1, 0, 512, 100, 70},
	} {
		tA, tB, m, n, k := s[0] == 1, s[1] == 1, s[2], s[3], s[4]
		lda, ldb := k, n
		if tA {
			lda = m
		}
		if tB {
			ldb = k
		}
		a, b := random[float32](rng, m, k, k), random[float32](rng, k, n, n)
		c0 := random[float32](rng, m, n, n)
		bias := Epilogue[float32]{Bias: random[float32](rng, 1, n, n), ReLU: true}
		for _, prec := range []struct {
			name string
			run  func(tA, tB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, e Epilogue[float32])
			pack func(tB bool, k, n int, b []float32, ldb int) *PackedB[float32]
		}{{"float32", SgemmEpilogue, PackSB}, {"bf16", SgemmBF16, PackBF16B}} {
			for i, beta := range []float32{0, 1, -0.5} {
				e := Epilogue[float32]{}
				if i != 1 {
					e = bias
				}
				for _, packed := range []bool{false, true} {
					var want []float32
					for _, procs := range []int{1, 2, 3, 5} {
						prev := runtime.GOMAXPROCS(procs)
						c := slices.Clone(c0)
						if packed {
							SgemmPacked(tA, m, a, lda, prec.pack(tB, k, n, b, ldb), beta, c, n, e)
						} else {
							prec.run(tA, tB, m, n, k, a, lda, b, ldb, beta, c, n, e)
						}
						runtime.GOMAXPROCS(prev)
						if want == nil {
							want = c
						} else if !slices.Equal(c, want) {
							t.Fatalf("%s %v, beta %v, packed %v: GOMAXPROCS %d differs from 1", prec.name, s, beta, packed, procs)
						}
					}
				}
			}
		}
	}
}
