// Package gemm multiplies dense row-major matrices: C = op(A)·op(B) + beta·C
// in float32 (Sgemm) and float64 (Dgemm). It is pure Go, with assembly
// micro-kernels for amd64 CPUs that have AVX-512 or AVX2 and FMA, chosen at
// run time; other CPUs get a portable Go kernel.
//
// The scheme is the one of GotoBLAS and BLIS: panels of A and B are copied
// ("packed") into contiguous buffers laid out in the order a small register
// tile of C (the micro-kernel) reads them, and the loops around the
// micro-kernel are blocked so that each packed panel stays in the cache level
// that suits how often it is reread. See driver.go for the loops. Large
// products are split among up to GOMAXPROCS goroutines.
//
// An Epilogue (SgemmEpilogue) finishes C in the same pass: a bias added to
// every row and a ReLU, applied to each block of C as soon as it is
// computed, while it is still in cache.
//
// Two shortcuts serve decoding, which multiplies a few rows by the same
// weights at every step: products of up to four rows are matrix–vector
// products that read B once, without packing it (gemv.go), and a B that
// many products share can be packed once (PackSB, SgemmPacked; packed.go).
//
// Products are accumulated in the element type, as BLAS does. SgemmBF16
// rounds float32 operands to bfloat16 and accumulates in float32, with
// AVX512_BF16's VDPBF16PS where the CPU has it (bf16.go).
package gemm

import "fmt"

// Sgemm computes C = op(A)·op(B) + beta·C for row-major float32 matrices,
// where op(A) is m×k and op(B) is k×n.
//
// A is stored m×k, or k×m when transA is set, with leading dimension (row
// stride) lda; likewise B is stored k×n, or n×k when transB is set, with
// leading dimension ldb; C is m×n with leading dimension ldc. When beta is 0,
// C is not read, so it may hold NaNs. Sgemm panics when a size is negative,
// a leading dimension is smaller than its row, or a slice is too short.
func Sgemm(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	run(sgemm, svec, problem[float32]{transA: transA, transB: transB, m: m, n: n, k: k, a: a, lda: lda, b: b, ldb: ldb, beta: beta, c: c, ldc: ldc})
}

// Dgemm is Sgemm for float64 matrices.
func Dgemm(transA, transB bool, m, n, k int, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	run(dgemm, dvec, problem[float64]{transA: transA, transB: transB, m: m, n: n, k: k, a: a, lda: lda, b: b, ldb: ldb, beta: beta, c: c, ldc: ldc})
}

// SgemmEpilogue computes C = e(op(A)·op(B) + beta·C): Sgemm, then the
// epilogue e on every element of C. It panics, as Sgemm does, and when
// e.Bias is neither nil nor of length n.
func SgemmEpilogue(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, e Epilogue[float32]) {
	run(sgemm, svec, problem[float32]{transA: transA, transB: transB, m: m, n: n, k: k, a: a, lda: lda, b: b, ldb: ldb, beta: beta, c: c, ldc: ldc, epi: e})
}

// DgemmEpilogue is SgemmEpilogue for float64 matrices.
func DgemmEpilogue(transA, transB bool, m, n, k int, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int, e Epilogue[float64]) {
	run(dgemm, dvec, problem[float64]{transA: transA, transB: transB, m: m, n: n, k: k, a: a, lda: lda, b: b, ldb: ldb, beta: beta, c: c, ldc: ldc, epi: e})
}

// run computes p with the matrix–vector kernels v when op(A) has only a few
// rows (see gemv.go), else with im.
func run[T float](im *impl[T], v *vecKernels[T], p problem[T]) {
	if p.skinny() {
		p.check()
		v.run(p)
		p.epi.Apply(p.c, p.ldc, p.m, p.n)
		return
	}
	im.run(p)
}

// float is the element type of the matrices.
type float interface{ ~float32 | ~float64 }

// problem holds the arguments of one call to Sgemm or Dgemm.
type problem[T float] struct {
	transA, transB bool
	m, n, k        int
	a              []T
	lda            int
	b              []T
	ldb            int
	beta           T
	c              []T
	ldc            int
	// packed, when set, is op(B) packed already (b is not read), and j0
	// the column of op(B) where this problem's columns start.
	packed *PackedB[T]
	j0     int
	// epi finishes C; its Bias starts at C's first column.
	epi Epilogue[T]
}

// check panics unless the sizes, leading dimensions and slice lengths of p
// describe matrices that lie within their slices.
func (p *problem[T]) check() {
	if p.m < 0 || p.n < 0 || p.k < 0 {
		panic(fmt.Sprintf("gemm: negative size m=%d n=%d k=%d", p.m, p.n, p.k))
	}
	ar, ac := p.m, p.k
	if p.transA {
		ar, ac = ac, ar
	}
	br, bc := p.k, p.n
	if p.transB {
		br, bc = bc, br
	}
	checkMatrix("a", ar, ac, len(p.a), p.lda)
	if p.packed == nil {
		checkMatrix("b", br, bc, len(p.b), p.ldb)
	}
	checkMatrix("c", p.m, p.n, len(p.c), p.ldc)
	if p.epi.Bias != nil && len(p.epi.Bias) != p.n {
		panic(fmt.Sprintf("gemm: a bias of %d elements for %d columns", len(p.epi.Bias), p.n))
	}
}

// checkMatrix panics unless a rows×cols matrix with leading dimension ld fits
// in a slice of length n.
func checkMatrix(name string, rows, cols, n, ld int) {
	if ld < max(1, cols) {
		panic(fmt.Sprintf("gemm: leading dimension of %s is %d, less than its %d columns", name, ld, cols))
	}
	if rows > 0 && cols > 0 && n < (rows-1)*ld+cols {
		panic(fmt.Sprintf("gemm: %s has %d elements, too few for %d×%d with leading dimension %d", name, n, rows, cols, ld))
	}
}
