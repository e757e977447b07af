package gemm

// avx512Pairing is the pairing of the AVX512_BF16 GEMM: VCVTNE2PS2BF16
// rounds, AVX-512 shuffles transpose lines, VPERMW pairs strips.
var avx512Pairing = pairing{lines: pairLinesBF16, strips: pairStripsBF16}

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

// lowBits is a mask of the low n bits.
func lowBits(n int) int { return 1<<n - 1 }

// pairLines16 packs up to 16 lines of kc contiguous elements, line i at
// offs[i] bytes past src, into 16-slot rows of bfloat16 pairs, wb bytes
// apart at dst, storing the lanes of mask. It needs AVX512_BF16.
//
//go:noescape
func pairLines16(dst *float32, wb int, mask int, src *float32, offs *[16]int, kc int)

// pairStripsBF16 is a strips packer (see pairing) that packs up to 16
// lines at a time with pairStrip: a strip ends where it would reach a third
// panel, so that it stores into two at most. It needs AVX512_BF16.
func pairStripsBF16(dst []float32, w int, src []float32, ld, kc, n int) {
	d, padded := (kc+1)/2, roundUp(n, w)
	_, _ = dst[padded*d-1], src[(kc-1)*ld+n-1] // bounds for pairStrip
	if n < padded {
		clear(dst[(padded-w)*d : padded*d]) // no strip starts past n
	}
	rows := kc
	if n > narrowStrips {
		rows = stripRows
	}
	for q := 0; q < kc; q += rows {
		for j := 0; j < n; {
			p := j / w                            // the panel of the strip's first line
			first := min(16, (p+1)*w-j, padded-j) // its lines in panel p
			lanes := min(16, first+w, padded-j)   // and in all, read as zero past n
			at := p*w*d + j - p*w + q/2*w         // slot q/2 of its first line
			masks := lowBits(first) | (lowBits(lanes)&^lowBits(first))<<16 | lowBits(min(lanes, n-j))<<32
			pairStrip(&dst[at], 4*w*(d-1), masks, &src[q*ld+j], ld, min(rows, kc-q), 4*w)
			j += lanes
		}
	}
}

// stripRows is how many rows pairStripsBF16 packs across all the strips of
// a wide block before the next rows: read down a whole strip, rows a
// multiple of 1 KB apart fall into a few sets of the L1 cache and evict
// the lines the next strip needs. narrowStrips is the widest block packed
// a strip at a time, where the calls would cost more than the misses.
const (
	stripRows    = 8
	narrowStrips = 32
)

// pairStrip packs a strip of up to 16 lines lying side by side, element q
// of line i at src[q·ld+i], into slots of bfloat16 pairs: those of lines
// whose bits are set in masks&0xffff at dst (lane i at dst[i], row q of
// pairs wb bytes after row q-1), those of masks>>16&0xffff off1 bytes
// further; lines not in masks>>32 are read as zero. It needs AVX512_BF16.
//
//go:noescape
func pairStrip(dst *float32, off1 int, masks int, src *float32, ld, kc, wb int)

// pairRowsBF16 is the packer of rowPanels for the AVX512_BF16 GEMM: it
// packs n lines of kc contiguous elements (an untransposed A) into panels
// of w lines laid out by rows, line l of the block holding its (kc+1)/2
// slots of pairs (as pairing's) at l·(kc+1)/2, the last panel's lines past
// n zero. It needs AVX512_BF16.
func pairRowsBF16(dst []float32, w int, src []float32, ld, kc, n int) {
	d := (kc + 1) / 2
	if n == 0 || kc == 0 {
		return
	}
	_, _ = dst[roundUp(n, w)*d-1], src[(n-1)*ld+kc-1] // bounds for pairRows
	pairRows(&dst[0], &src[0], ld, kc, n)
	clear(dst[n*d : roundUp(n, w)*d])
}

// pairRows packs n lines of kc contiguous elements, line i at src[i·ld],
// into slots of bfloat16 pairs, line i's at dst[i·(kc+1)/2]. It needs
// AVX512_BF16.
//
//go:noescape
func pairRows(dst, src *float32, ld, kc, n int)
