package gemm

import "unsafe"

// sgemms and dgemms list the implementations this CPU can run, slowest
// first; sgemm and dgemm, the ones Sgemm and Dgemm use, are the last.
// kernel_amd64.go adds the assembly ones.
var (
	sgemms = []*impl[float32]{goSgemm}
	dgemms = []*impl[float64]{goDgemm}
	sgemm  = goSgemm
	dgemm  = goDgemm
)

// goSgemm and goDgemm are the portable implementations, built on a 4×4
// micro-kernel in Go.
var (
	goSgemm = &impl[float32]{name: "go", mr: 4, nr: 4, mc: 128, kc: 256, nc: 4096, kernel: kernel4x4[float32],
		gather: gather[float32], scatter: scatter[float32]}
	goDgemm = &impl[float64]{name: "go", mr: 4, nr: 4, mc: 64, kc: 256, nc: 2048, kernel: kernel4x4[float64],
		gather: gather[float64], scatter: scatter[float64]}
)

// kernel4x4 is a microKernel for 4×4 tiles, keeping the tile in 16 local
// variables.
func kernel4x4[T float](k int, a, b, c *T, ldc int, accumulate bool) {
	as, bs := unsafe.Slice(a, 4*k), unsafe.Slice(b, 4*k)
	var c00, c01, c02, c03, c10, c11, c12, c13 T
	var c20, c21, c22, c23, c30, c31, c32, c33 T
	for p := range k {
		ap, bp := as[4*p:][:4], bs[4*p:][:4]
		a0, a1, a2, a3 := ap[0], ap[1], ap[2], ap[3]
		b0, b1, b2, b3 := bp[0], bp[1], bp[2], bp[3]
		c00, c01, c02, c03 = c00+a0*b0, c01+a0*b1, c02+a0*b2, c03+a0*b3
		c10, c11, c12, c13 = c10+a1*b0, c11+a1*b1, c12+a1*b2, c13+a1*b3
		c20, c21, c22, c23 = c20+a2*b0, c21+a2*b1, c22+a2*b2, c23+a2*b3
		c30, c31, c32, c33 = c30+a3*b0, c31+a3*b1, c32+a3*b2, c33+a3*b3
	}
	cs := unsafe.Slice(c, 3*ldc+4)
	tile := [4][4]T{
		{c00, c01, c02, c03},
		{c10, c11, c12, c13},
		{c20, c21, c22, c23},
		{c30, c31, c32, c33},
	}
	for i, row := range tile {
		ci := cs[i*ldc:][:4]
		if accumulate {
			ci[0], ci[1], ci[2], ci[3] = ci[0]+row[0], ci[1]+row[1], ci[2]+row[2], ci[3]+row[3]
		} else {
			ci[0], ci[1], ci[2], ci[3] = row[0], row[1], row[2], row[3]
		}
	}
}
