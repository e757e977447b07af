package gemm

import "golang.org/x/sys/cpu"

// avx2Vec32 holds the float32 matrix–vector kernels in assembly, for CPUs
// with AVX2 and FMA; the edges of k and n are done in Go.
var avx2Vec32 = &vecKernels[float32]{name: "avx2", dot: dotAVX2, axpy: axpyAVX2}

func init() {
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		svec = avx2Vec32
	}
}

// dotAVX2 is dotRows with sdotRows doing the first k&^7 values of each
// dot product.
func dotAVX2(k, n int, x, b []float32, ldb int, y []float32) {
	k8 := k &^ 7
	if k8 == 0 {
		dotRows(k, n, x, b, ldb, y)
		return
	}
	_, _, _ = x[k-1], b[(n-1)*ldb+k-1], y[n-1] // bounds for sdotRows
	sdotRows(k8, &x[0], &b[0], ldb, n, &y[0])
	if k8 == k {
		return
	}
	xt := x[k8:k]
	for j := range n {
		s := y[j]
		for p, v := range b[j*ldb+k8:][:len(xt)] {
			s += xt[p] * v
		}
		y[j] = s
	}
}

// axpyAVX2 is axpyRows with saxpyCols doing the first n&^7 columns.
func axpyAVX2(k, n int, x, b []float32, ldb int, y []float32) {
	n8 := n &^ 7
	if n8 > 0 {
		_, _, _ = x[k-1], b[(k-1)*ldb+n8-1], y[n8-1] // bounds for saxpyCols
		saxpyCols(k, &x[0], &b[0], ldb, n8, &y[0])
	}
	if n8 < n {
		axpyRows(k, n-n8, x, b[n8:], ldb, y[n8:])
	}
}

// sdotRows sets y[j] = Σ_{p<k8} x[p]·b[j·ldb+p] for j < n; k8 is a positive
// multiple of 8. It needs AVX2 and FMA.
//
//go:noescape
func sdotRows(k8 int, x, b *float32, ldb, n int, y *float32)

// saxpyCols sets y[j] = Σ_{p<k} x[p]·b[p·ldb+j] for j < n8; k ≥ 1 and n8 is
// a multiple of 8. It needs AVX2 and FMA.
//
//go:noescape
func saxpyCols(k int, x, b *float32, ldb, n8 int, y *float32)
