package gemm

import "golang.org/x/sys/cpu"

// The assembly implementations: AVX-512 where the CPU and OS support it,
// else AVX2 with FMA.
//
// The AVX2 micro-kernels keep a 6×16 (float32) or 6×8 (float64) tile of C in
// twelve YMM registers, the AVX-512 ones a 12×32 or 12×16 tile in 24 ZMM
// registers. The blocks are sized for 48 KB of L1 and 1 MB of L2 per core:
// one kc×nr panel of B (16-32 KB) stays in L1 while it is multiplied by the
// whole mc×kc block of A (150-200 KB) in L2.
var (
	avx2Sgemm = &impl[float32]{name: "avx2", mr: 6, nr: 16, mc: 144, kc: 256, nc: 4096, kernel: sgemmKernel6x16,
		gather: gatherAVX, scatter: scatterAVX}
	avx2Dgemm = &impl[float64]{name: "avx2", mr: 6, nr: 8, mc: 72, kc: 256, nc: 2048, kernel: dgemmKernel6x8,
		gather: gather[float64], scatter: scatter[float64]}

	avx512Sgemm = &impl[float32]{name: "avx512", mr: 12, nr: 32, mc: 192, kc: 256, nc: 4096,
		kernel: plain(sgemmKernel12x32), finish: sgemmKernel12x32,
		gather: gatherAVX, scatter: scatterAVX}
	// avx512BF16 is the bfloat16 GEMM with VDPBF16PS: its kc elements of
	// the inner dimension take the bytes of 256 float32 ones.
	avx512BF16 = &impl[float32]{name: "avx512bf16", mr: 12, nr: 32, mc: 192, kc: 512, nc: 4096,
		kernel: plain(bf16Kernel12x32), finish: bf16Kernel12x32,
		gather: gatherAVX, scatter: scatterAVX, panels: avx512Pairing,
		short: &kernels[float32]{kernel: plain(bf16Kernel8x32), finish: bf16Kernel8x32},
		rows: &rowPanels[float32]{pack: pairRowsBF16, kernels: kernels[float32]{kernel: plain(bf16Kernel12x32Rows), finish: bf16Kernel12x32Rows,
			short: &kernels[float32]{kernel: plain(bf16Kernel8x32Rows), finish: bf16Kernel8x32Rows}}}}
	avx512Dgemm = &impl[float64]{name: "avx512", mr: 12, nr: 16, mc: 96, kc: 256, nc: 2048, kernel: dgemmKernel12x16,
		gather: gather[float64], scatter: scatter[float64]}
)

func init() {
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		sgemms, dgemms = append(sgemms, avx2Sgemm), append(dgemms, avx2Dgemm)
	}
	if cpu.X86.HasAVX512F {
		sgemms, dgemms = append(sgemms, avx512Sgemm), append(dgemms, avx512Dgemm)
	}
	sgemm, dgemm = sgemms[len(sgemms)-1], dgemms[len(dgemms)-1]
	round := roundGo
	if cpu.X86.HasAVX2 {
		round = roundAVX2
	}
	if cpu.X86.HasAVX512F {
		round = roundAVX512
	}
	sbf16 = widening(sgemm, round)
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512BF16 {
		sbf16 = checked(avx512BF16, sbf16)
	}
}

// sgemmKernel6x16 is an AVX2 microKernel for 6×16 float32 tiles; k ≥ 1.
//
//go:noescape
func sgemmKernel6x16(k int, a, b, c *float32, ldc int, accumulate bool)

// dgemmKernel6x8 is an AVX2 microKernel for 6×8 float64 tiles; k ≥ 1.
//
//go:noescape
func dgemmKernel6x8(k int, a, b, c *float64, ldc int, accumulate bool)

// sgemmKernel12x32 is an AVX-512 finishingKernel for 12×32 float32 tiles;
// k ≥ 1.
//
//go:noescape
func sgemmKernel12x32(k int, a, b, c *float32, ldc int, accumulate bool, bias *float32, relu bool)

// dgemmKernel12x16 is an AVX-512 microKernel for 12×16 float64 tiles; k ≥ 1.
//
//go:noescape
func dgemmKernel12x16(k int, a, b, c *float64, ldc int, accumulate bool)

// bf16Kernel12x32 is an AVX512_BF16 finishingKernel for 12×32 float32
// tiles from panels of bfloat16 pairs (pairing); k ≥ 1 counts pairs.
//
//go:noescape
func bf16Kernel12x32(k int, a, b, c *float32, ldc int, accumulate bool, bias *float32, relu bool)

// bf16Kernel12x32Rows is bf16Kernel12x32 on an A panel laid out by rows:
// row r's k pairs one after the other, 4·k bytes after row r-1's.
//
//go:noescape
func bf16Kernel12x32Rows(k int, a, b, c *float32, ldc int, accumulate bool, bias *float32, relu bool)

// bf16Kernel8x32 is bf16Kernel12x32 on the first 8 rows of the panel: an
// 8×32 tile.
//
//go:noescape
func bf16Kernel8x32(k int, a, b, c *float32, ldc int, accumulate bool, bias *float32, relu bool)

// bf16Kernel8x32Rows is bf16Kernel8x32 on a panel laid out by rows.
//
//go:noescape
func bf16Kernel8x32Rows(k int, a, b, c *float32, ldc int, accumulate bool, bias *float32, relu bool)
