package gemm

import "golang.org/x/sys/cpu"

// The matrix–vector kernels in assembly, for CPUs with AVX2 and FMA; the
// edges of k and n are done in Go.
var (
	avx2Vec32 = asmVec("avx2", asmKernels[float32]{lanes: 8, rows: 1, dot: sdotRows, axpy: saxpyCols})
	avx2Vec64 = asmVec("avx2", asmKernels[float64]{lanes: 4, rows: 4, dot: ddotRows, axpy: daxpyCols})
)

func init() {
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		svec, dvec = avx2Vec32, avx2Vec64
	}
}

// asmKernels are assembly kernels of one element type. dot sets
// y[j] = Σ_{p<k} x[p]·b[j·ldb+p] for j < n, where k is a positive multiple
// of lanes and n a multiple of rows; axpy sets y[j] = Σ_{p<k} x[p]·b[p·ldb+j]
// for j < n, where k ≥ 1 and n is a multiple of lanes.
type asmKernels[T float] struct {
	lanes, rows int
	dot, axpy   func(k int, x, b *T, ldb, n int, y *T)
}

// asmVec is the vecKernels built around a.
func asmVec[T float](name string, a asmKernels[T]) *vecKernels[T] {
	return &vecKernels[T]{name: name, dot: a.dotRows, axpy: a.axpyRows}
}

// dotRows is the dot kernel: the assembly one for the first k - k%lanes
// values of the first n - n%rows dot products, Go for the rest.
func (a asmKernels[T]) dotRows(k, n int, x, b []T, ldb int, y []T) {
	kv, nv := k-k%a.lanes, n-n%a.rows
	if kv == 0 || nv == 0 {
		dotRows(k, n, x, b, ldb, y)
		return
	}
	_, _, _ = x[k-1], b[(nv-1)*ldb+k-1], y[nv-1] // bounds for a.dot
	a.dot(kv, &x[0], &b[0], ldb, nv, &y[0])
	if nv < n {
		dotRows(k, n-nv, x, b[nv*ldb:], ldb, y[nv:])
	}
	if kv == k {
		return
	}
	xt := x[kv:k]
	for j := range nv {
		s := y[j]
		for p, v := range b[j*ldb+kv:][:len(xt)] {
			s += xt[p] * v
		}
		y[j] = s
	}
}

// axpyRows is the axpy kernel: the assembly one for the first n - n%lanes
// columns, Go for the rest.
func (a asmKernels[T]) axpyRows(k, n int, x, b []T, ldb int, y []T) {
	nv := n - n%a.lanes
	if nv > 0 {
		_, _, _ = x[k-1], b[(k-1)*ldb+nv-1], y[nv-1] // bounds for a.axpy
		a.axpy(k, &x[0], &b[0], ldb, nv, &y[0])
	}
	if nv < n {
		axpyRows(k, n-nv, x, b[nv:], ldb, y[nv:])
	}
}

// sdotRows is asmKernels.dot for float32 (lanes 8, rows 1).
//
//go:noescape
func sdotRows(k int, x, b *float32, ldb, n int, y *float32)

// saxpyCols is asmKernels.axpy for float32 (lanes 8).
//
//go:noescape
func saxpyCols(k int, x, b *float32, ldb, n int, y *float32)

// ddotRows is asmKernels.dot for float64 (lanes 4, rows 4).
//
//go:noescape
func ddotRows(k int, x, b *float64, ldb, n int, y *float64)

// daxpyCols is asmKernels.axpy for float64 (lanes 4).
//
//go:noescape
func daxpyCols(k int, x, b *float64, ldb, n int, y *float64)
