package gemm

import "golang.org/x/sys/cpu"

// The AVX2/FMA implementations. Their micro-kernels keep a 6×16 (float32) or
// 6×8 (float64) tile of C in twelve YMM registers. The A block (mc×kc, about
// 150 KB) fits L2 comfortably and one B panel (kc×nr, 16 KB) fits L1.
var (
	avx2Sgemm = &impl[float32]{name: "avx2", mr: 6, nr: 16, mc: 144, kc: 256, nc: 4096, kernel: sgemmKernel6x16}
	avx2Dgemm = &impl[float64]{name: "avx2", mr: 6, nr: 8, mc: 72, kc: 256, nc: 2048, kernel: dgemmKernel6x8}
)

func init() {
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		sgemm, dgemm = avx2Sgemm, avx2Dgemm
	}
}

// sgemmKernel6x16 is a microKernel for 6×16 float32 tiles. It needs k ≥ 1.
//
//go:noescape
func sgemmKernel6x16(k int, a, b, c *float32, ldc int, accumulate bool)

// dgemmKernel6x8 is a microKernel for 6×8 float64 tiles. It needs k ≥ 1.
//
//go:noescape
func dgemmKernel6x8(k int, a, b, c *float64, ldc int, accumulate bool)
