package gemm

import "sync"

// Products whose op(A) has only a few rows, such as a decoding step's
// [1, dModel] or [beams, dModel] by a weight matrix, are computed without
// packing: the packing of B would cost as much as the product, and the
// register tile of the micro-kernel would be mostly empty. Instead each row
// of C is a matrix–vector product that streams B once:
//
//	c[i, j] = Σ_p x[p]·B[j, p]   (transB: dot products with B's rows)
//	c[i, j] = Σ_p x[p]·B[p, j]   (not transB: a sum of B's rows scaled by x)
//
// where x is row i of op(A). For more than one row, B is walked in blocks
// small enough to stay in L1 while every row of op(A) is multiplied by them.

// maxSkinnyRows is the most rows of op(A) for which a product is computed
// as matrix–vector products.
const maxSkinnyRows = 4

// l1Bytes is how much of B a block of the matrix–vector products holds:
// about half of a 32 KB L1 cache.
const l1Bytes = 16 << 10

// vecKernels computes one row of C from one row of op(A), for one element
// type: dot for transposed B, axpy for B as it is. Both write
// y[j] for j < n, given x[0:k]; k and n are positive.
type vecKernels[T float] struct {
	name string
	// dot sets y[j] = Σ_p x[p]·b[j·ldb+p].
	dot func(k, n int, x, b []T, ldb int, y []T)
	// axpy sets y[j] = Σ_p x[p]·b[p·ldb+j].
	axpy func(k, n int, x, b []T, ldb int, y []T)
	pool sync.Pool // of *[]T scratch: a gathered row of op(A), a block of C
}

// goVec32 and goVec64 are the portable matrix–vector kernels; svec and dvec
// the ones Sgemm and Dgemm use (gemv_amd64.go sets the assembly ones).
var (
	goVec32 = &vecKernels[float32]{name: "go", dot: dotRows[float32], axpy: axpyRows[float32]}
	goVec64 = &vecKernels[float64]{name: "go", dot: dotRows[float64], axpy: axpyRows[float64]}
	svec    = goVec32
	dvec    = goVec64
)

// skinny reports whether p is computed as matrix–vector products.
func (p *problem[T]) skinny() bool {
	return p.m >= 1 && p.m <= maxSkinnyRows && p.n > 0 && p.k > 0
}

// run computes p, checked and skinny.
func (v *vecKernels[T]) run(p problem[T]) {
	// B is walked in blocks of nb columns of op(B) (rows of B when
	// transposed), the columns of C each block gives.
	nb := p.n
	if p.m > 1 || p.beta != 0 {
		nb = min(p.n, max(32, l1Bytes/sizeOf[T]()/p.k/32*32))
	}
	scratch := v.scratch(p.k + nb)
	defer v.pool.Put(scratch)
	xbuf, ybuf := (*scratch)[:p.k], (*scratch)[p.k:]
	for j0 := 0; j0 < p.n; j0 += nb {
		n := min(nb, p.n-j0)
		b := p.b[j0:]
		if p.transB {
			b = p.b[j0*p.ldb:]
		}
		for i := range p.m {
			x := xbuf
			if p.transA {
				for q := range xbuf {
					xbuf[q] = p.a[q*p.lda+i]
				}
			} else {
				x = p.a[i*p.lda:]
			}
			c := p.c[i*p.ldc+j0:][:n]
			y := c
			if p.beta != 0 {
				y = ybuf[:n]
			}
			if p.transB {
				v.dot(p.k, n, x[:p.k], b, p.ldb, y)
			} else {
				v.axpy(p.k, n, x[:p.k], b, p.ldb, y)
			}
			if p.beta != 0 {
				for j, s := range y {
					c[j] = s + p.beta*c[j]
				}
			}
		}
	}
}

// scratch returns a buffer of at least n elements from the pool.
func (v *vecKernels[T]) scratch(n int) *[]T {
	s, _ := v.pool.Get().(*[]T)
	if s == nil {
		s = new([]T)
	}
	if cap(*s) < n {
		*s = make([]T, n)
	}
	*s = (*s)[:n]
	return s
}

// sizeOf is the size of T in bytes.
func sizeOf[T float]() int {
	if _, ok := any(T(0)).(float32); ok {
		return 4
	}
	return 8
}

// dotRows is the portable dot kernel: y[j] = Σ_p x[p]·b[j·ldb+p].
func dotRows[T float](k, n int, x, b []T, ldb int, y []T) {
	x = x[:k]
	for j := range n {
		bj := b[j*ldb:][:k]
		var s0, s1, s2, s3 T
		p := 0
		for ; p+4 <= k; p += 4 {
			s0 += x[p] * bj[p]
			s1 += x[p+1] * bj[p+1]
			s2 += x[p+2] * bj[p+2]
			s3 += x[p+3] * bj[p+3]
		}
		for ; p < k; p++ {
			s0 += x[p] * bj[p]
		}
		y[j] = (s0 + s1) + (s2 + s3)
	}
}

// axpyRows is the portable axpy kernel: y[j] = Σ_p x[p]·b[p·ldb+j].
func axpyRows[T float](k, n int, x, b []T, ldb int, y []T) {
	y = y[:n]
	clear(y)
	for p, xp := range x[:k] {
		bp := b[p*ldb:][:n]
		for j, v := range bp {
			y[j] += xp * v
		}
	}
}
