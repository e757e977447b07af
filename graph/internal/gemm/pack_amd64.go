package gemm

// gatherAVX is gather for float32 that copies 8 or 4 values at a time with
// AVX.
func gatherAVX(dst []float32, w int, src []float32, ld, rows, cols int) {
	if cols < 4 {
		gather(dst, w, src, ld, rows, cols)
		return
	}
	_, _ = dst[(rows-1)*w+cols-1], src[(rows-1)*ld+cols-1] // bounds for copyRows
	copyRows(&dst[0], w, &src[0], ld, rows, cols)
}

// scatterAVX is scatter for float32 that transposes blocks of 4 rows × 8
// columns with AVX, or of 6 rows × 8 columns into a panel 6 wide (a whole
// panel of A for the 6-row micro-kernel); blocks at the bottom and right
// edges may overlap the ones before them.
func scatterAVX(dst []float32, w int, src []float32, ld, rows, cols int) {
	if rows < 4 || cols < 8 {
		scatter(dst, w, src, ld, rows, cols)
		return
	}
	if rows == 6 && w == 6 {
		_, _ = dst[6*cols-1], src[5*ld+cols-1] // bounds for transpose6x8
		transpose6x8(&dst[0], &src[0], ld, cols/8)
		if j := cols - 8; cols%8 != 0 {
			transpose6x8(&dst[6*j], &src[j], ld, 1)
		}
		return
	}
	_, _ = dst[(cols-1)*w+rows-1], src[(rows-1)*ld+cols-1] // bounds for transpose4x8
	for r0 := 0; r0 < rows; r0 += 4 {
		r := min(r0, rows-4)
		transpose4x8(&dst[r], w, &src[r*ld], ld, cols/8)
		if cols%8 != 0 {
			j := cols - 8
			transpose4x8(&dst[j*w+r], w, &src[r*ld+j], ld, 1)
		}
	}
}

// transpose4x8 writes the transpose of the 4×8n matrix src (leading
// dimension ld) to dst (leading dimension w). It needs AVX.
//
//go:noescape
func transpose4x8(dst *float32, w int, src *float32, ld int, n int)

// transpose6x8 writes the transpose of the 6×8n matrix src (leading
// dimension ld) to the 8n×6 matrix dst, whose rows are contiguous. It needs
// AVX.
//
//go:noescape
func transpose6x8(dst *float32, src *float32, ld int, n int)

// copyRows copies the rows×cols matrix src (leading dimension ld) to dst
// (leading dimension w); cols ≥ 4. It needs AVX.
//
//go:noescape
func copyRows(dst *float32, w int, src *float32, ld int, rows, cols int)

// roundAVX2 is roundGo with roundBF16 for all but the last len(src) mod 8
// values.
func roundAVX2(dst, src []float32) {
	n := len(src) &^ 7
	if n > 0 {
		_ = dst[len(src)-1]
		roundBF16(&dst[0], &src[0], n)
	}
	roundGo(dst[n:], src[n:])
}

// roundBF16 writes src[i] rounded to bfloat16 to dst[i] for i < n, a
// multiple of 8. It needs AVX2.
//
//go:noescape
func roundBF16(dst, src *float32, n int)

// roundAVX512 is roundGo with round512. It needs AVX-512F.
func roundAVX512(dst, src []float32) {
	if len(src) > 0 {
		_ = dst[len(src)-1]
		round512(&dst[0], &src[0], len(src))
	}
}

// round512 writes src[i] rounded to bfloat16 (RoundBF16) to dst[i] for i <
// n, 16 at a time with AVX-512F integer operations, the last n mod 16 with
// masks.
//
//go:noescape
func round512(dst, src *float32, n int)
