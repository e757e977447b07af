package gemm

// avx512Pairing is the pairing of the AVX512_BF16 GEMM: lines rounded with
// VCVTNE2PS2BF16 and transposed with AVX-512 shuffles, strips rounded and
// paired with AVX-512F integer operations.
var avx512Pairing = pairing{lines: pairLinesBF16, strips: pairStrips512}

// pairLinesBF16 is a lines packer (see pairing) that packs 16 lines at a
// time with pairLines16. It needs AVX512_BF16.
func pairLinesBF16(dst []float32, w int, src []float32, ld, kc, n int) {
	d := (kc + 1) / 2
	_, _ = dst[roundUp(n, w)*d-1], src[(n-1)*ld+kc-1] // bounds for pairLines16
	var offs [16]int
	for l := 0; l < n; l += w {
		lines, panel := min(w, n-l), dst[l*d:(l+w)*d]
		if lines < w {
			clear(panel)
		}
		for h := 0; h < lines; h += 16 {
			g := min(16, lines-h)
			for i := range offs {
				offs[i] = 4 * (l + h + min(i, g-1)) * ld // lines past g read the last one again
			}
			pairLines16(&panel[h], 4*w, lowBits(g), &src[0], &offs, kc)
		}
	}
}

// pairLines16 packs up to 16 lines of kc contiguous elements, line i at
// offs[i] bytes past src, into 16-slot rows of bfloat16 pairs, wb bytes
// apart at dst, storing the lanes of mask. It needs AVX512_BF16.
//
//go:noescape
func pairLines16(dst *float32, wb int, mask int, src *float32, offs *[16]int, kc int)
