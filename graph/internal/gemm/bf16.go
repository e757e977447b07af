package gemm

import (
	"math"
	"slices"
	"sync"
)

// The bfloat16 GEMM (SgemmBF16) multiplies float32 matrices whose elements
// are first rounded to bfloat16, accumulating in float32: the products of
// mixed-precision training, as PyTorch's autocast computes them. A bfloat16
// is the upper half of a float32: the sign, the same 8 exponent bits, and 7
// of the 23 fraction bits. The product of two of them is exact in float32,
// so only the accumulation rounds.
//
// Two implementations, chosen at run time:
//
//   - On CPUs with AVX512_BF16 the packed panels hold bfloat16 values, two
//     consecutive elements of the inner dimension in each 32-bit slot (see
//     pairing), and the micro-kernel multiplies them with VDPBF16PS, which
//     does two multiply-adds per float32 lane: twice the float32 kernel's
//     work per instruction, from half the memory.
//   - Elsewhere the packed panels hold float32 values rounded to bfloat16
//     (see rounding), and the float32 micro-kernel multiplies them: the same
//     products, summed in another order.
//
// Both round as VCVTNEPS2BF16 does: to nearest, ties to even; subnormals
// become zero of the same sign; a NaN stays a NaN, made quiet.

// ToBF16 rounds x to bfloat16 as VCVTNEPS2BF16 does: to nearest, ties to
// even (a finite value may round to infinity), subnormals to a zero of
// their sign, NaNs to quiet NaNs with the same sign and top fraction bits.
func ToBF16(x float32) uint16 {
	b := math.Float32bits(x)
	switch {
	case b&0x7f800000 == 0: // zero or subnormal
		return uint16(b>>16) & 0x8000
	case b&0x7fffffff > 0x7f800000: // NaN
		return uint16(b>>16) | 0x40
	}
	return uint16((b + 0x7fff + (b>>16)&1) >> 16)
}

// FromBF16 is the float32 of the bfloat16 h, exactly.
func FromBF16(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// RoundBF16 is x rounded to bfloat16 (ToBF16) and widened back to float32.
func RoundBF16(x float32) float32 { return FromBF16(ToBF16(x)) }

// roundGo writes every element of src rounded to bfloat16 to dst.
func roundGo(dst, src []float32) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = RoundBF16(v)
	}
}

// sbf16 is the implementation SgemmBF16 uses: kernel_amd64.go sets the
// AVX512_BF16 one on CPUs that have it, and otherwise the float32 GEMM's
// kernel on rounded panels (widening).
var sbf16 = widening(goSgemm, roundGo)

// widening returns the bfloat16 GEMM that packs its panels as im does,
// rounds them to bfloat16 with round (roundGo or a vector one) and
// multiplies them with im's float32 kernel.
func widening(im *impl[float32], round func(dst, src []float32)) *impl[float32] {
	return &impl[float32]{name: im.name + "-widen", mr: im.mr, nr: im.nr, mc: im.mc, kc: im.kc, nc: im.nc,
		kernel: im.kernel, finish: im.finish, gather: im.gather, scatter: im.scatter, panels: newRounding(round)}
}

// SgemmBF16 computes C = op(A)·op(B) + beta·C as Sgemm does, with every
// element of A and B rounded to bfloat16 (ToBF16) before it is multiplied,
// and the products summed in float32, when BF16Pays(m, n, k); smaller
// products it computes as Sgemm does, in float32. It panics as Sgemm does.
func SgemmBF16(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, e Epilogue[float32]) {
	p := problem[float32]{transA: transA, transB: transB, m: m, n: n, k: k, a: a, lda: lda, b: b, ldb: ldb, beta: beta, c: c, ldc: ldc, epi: e}
	if !BF16Pays(m, n, k) {
		run(sgemm, svec, p)
		return
	}
	sbf16.run(p)
}

// minBF16Inner and minBF16Work are the least inner dimension k and the
// least m·n·k of a product that SgemmBF16 computes in bfloat16; products
// of up to four rows (Skinny) stay float32 too, as matrix–vector products
// that read B without packing it. Below these bfloat16 did not pay on an
// AMD EPYC of family 25 (Zen 4) with AVX512_BF16, one core, timed against
// float32 in turn:
//
//	go test -run '^$' -bench BF16Threshold -benchtime 30ms -count 3 -cpu 1 ./graph/internal/gemm
//
// The best of three: cubes of 8 at 0.8-0.95 times float32's speed, of 12
// at 0.95-1.02, of 16 at 1.1-1.24, of 32 (attention's heads) at 1.26-1.34,
// of 64 at 1.6-1.7; an inner dimension of 8 (32×32×8) at 0.9-1.08, of 16
// (1024×128×16) at 1.5; 8 rows by 512 or 8,000 columns at 1.15-1.8. See
// docs/bf16.md.
const (
	minBF16Inner = 16
	minBF16Work  = 16 * 16 * 16
)

// BF16Pays reports whether SgemmBF16 computes a product of op(A) m×k by
// op(B) k×n in bfloat16: when op(A) has more than four rows, k is at least
// 16 and m·n·k at least 16³ (minBF16Inner, minBF16Work). Callers that pack
// B for bfloat16 products beforehand (PackBF16B) ask it too, so that a
// product gives the same result packed or not.
func BF16Pays(m, n, k int) bool {
	return !Skinny(m) && k >= minBF16Inner && m*n*k >= minBF16Work
}

// PackBF16B packs op(B), k×n, rounded to bfloat16, for SgemmPacked, which
// then computes SgemmBF16's products: B is stored k×n, or n×k when transB
// is set, with leading dimension ldb. On CPUs with AVX512_BF16 the copy
// takes half the memory of B. It panics when B does not fit in b.
func PackBF16B(transB bool, k, n int, b []float32, ldb int) *PackedB[float32] {
	return pack(sbf16, transB, k, n, b, ldb)
}

// RepackBF16B is PackBF16B into the memory of pb, a copy PackBF16B or
// RepackBF16B made of another k×n op(B), which it overwrites; when pb is
// nil or of other sizes, it is PackBF16B.
func RepackBF16B(pb *PackedB[float32], transB bool, k, n int, b []float32, ldb int) *PackedB[float32] {
	return repack(sbf16, pb, transB, k, n, b, ldb)
}

// checked returns native when its products equal fallback's on problems
// with partial tiles and an odd inner dimension, with operands whose lines
// are contiguous (A·Bᵀ) and strided (Aᵀ·B: the packers' two layouts), and
// fallback otherwise, so that a kernel or packer that computes wrongly on
// this CPU is never used. The elements are small multiples of 1/8, exact
// in bfloat16, and so are their products and sums in float32 in any order.
func checked(native, fallback *impl[float32]) *impl[float32] {
	const m, n, k = 13, 35, 67
	a, b := make([]float32, m*k), make([]float32, k*n)
	for i := range a {
		a[i] = float32(i*7%23-11) / 8
	}
	for i := range b {
		b[i] = float32(i*5%19-9) / 8
	}
	for _, tr := range []bool{false, true} {
		lda, ldb := k, k
		if tr {
			lda, ldb = m, n
		}
		got, want := make([]float32, m*n), make([]float32, m*n)
		for _, run := range []struct {
			im *impl[float32]
			c  []float32
		}{{native, got}, {fallback, want}} {
			run.im.run(problem[float32]{transA: tr, transB: !tr, m: m, n: n, k: k, a: a, lda: lda, b: b, ldb: ldb, c: run.c, ldc: n})
		}
		if !slices.Equal(got, want) {
			return fallback
		}
	}
	return native
}

// BF16Kernel names the bfloat16 GEMM this CPU runs: "avx512bf16" for
// VDPBF16PS, else the float32 kernel it widens to, such as "avx2-widen".
func BF16Kernel() string { return sbf16.name }

// A panelPacker packs the panels of an implementation whose panels are not
// plain copies of A and B (gather and scatter): the bfloat16 ones.
type panelPacker[T float] interface {
	// packA and packB are impl.packA and impl.packB.
	packA(im *impl[T], dst []T, p problem[T], i0, p0, mc, kc int)
	packB(im *impl[T], dst []T, p problem[T], p0, j0, kc, nc int)
	// depth is how many slots of a panel's row (A) or column (B) hold kc
	// elements of the inner dimension.
	depth(kc int) int
}

// rounding rounds the block of A or B to be packed to bfloat16 into a
// scratch matrix, reading it where it lies (one call for a contiguous
// block), then packs that as the float32 GEMM does. round writes every
// element of its src rounded to bfloat16 to dst.
type rounding struct {
	round  func(dst, src []float32)
	blocks *sync.Pool // of *[]float32
}

func newRounding(round func(dst, src []float32)) rounding {
	return rounding{round: round, blocks: &sync.Pool{}}
}

func (r rounding) packA(im *impl[float32], dst []float32, p problem[float32], i0, p0, mc, kc int) {
	rows, cols := mc, kc
	if p.transA {
		rows, cols = kc, mc
	}
	r.packRounded(p.a[p.offsetA(i0, p0):], p.lda, rows, cols, func(a []float32, lda int) {
		q := p
		q.a, q.lda = a, lda
		im.copyA(dst, &q, 0, 0, mc, kc)
	})
}

func (r rounding) packB(im *impl[float32], dst []float32, p problem[float32], p0, j0, kc, nc int) {
	rows, cols := kc, nc
	if p.transB {
		rows, cols = nc, kc
	}
	r.packRounded(p.b[p.offsetB(p0, j0):], p.ldb, rows, cols, func(b []float32, ldb int) {
		q := p
		q.b, q.ldb = b, ldb
		im.copyB(dst, &q, 0, 0, kc, nc)
	})
}

// packRounded calls pack with the rows×cols matrix src (leading dimension
// ld) rounded to bfloat16, and its leading dimension.
func (r rounding) packRounded(src []float32, ld, rows, cols int, pack func(m []float32, ld int)) {
	buf := r.roundBlock(src, ld, rows, cols)
	pack(*buf, cols)
	r.blocks.Put(buf)
}

// roundBlock returns the rows×cols matrix src (leading dimension ld)
// rounded to bfloat16, with leading dimension cols, in a scratch buffer to
// put back.
func (r rounding) roundBlock(src []float32, ld, rows, cols int) *[]float32 {
	b, _ := r.blocks.Get().(*[]float32)
	if b == nil || cap(*b) < rows*cols {
		s := make([]float32, rows*cols)
		b = &s
	}
	*b = (*b)[:rows*cols]
	if ld == cols { // one run of memory: one call
		r.round(*b, src[:rows*cols])
		return b
	}
	for i := range rows {
		r.round((*b)[i*cols:(i+1)*cols], src[i*ld:][:cols])
	}
	return b
}

func (rounding) depth(kc int) int { return kc }

// pairing packs panels of bfloat16 pairs for VDPBF16PS: slot q of a row of
// an A panel, or of a column of a B panel, holds the elements 2q (low 16
// bits) and 2q+1 (high 16 bits) of the inner dimension, rounded to bfloat16;
// a block of odd length ends with a zero. The slots are float32 in type
// only: the packers move them as bits, never as numbers. The lines of a
// block (rows of op(A), columns of op(B)) lie in one of two layouts, and
// each has its packer: lines whose elements are contiguous (A as it is, B
// transposed), and strips, lines side by side whose elements lie a row
// apart (A transposed, B as it is).
type pairing struct {
	lines, strips blockPacker
}

// A blockPacker packs n lines of kc elements each from src into dst, as
// panels of w lines of (kc+1)/2 slots of pairs, zero past n up to a whole
// panel. Element q of line l is src[l·ld+q] for a lines packer, src[q·ld+l]
// for a strips one.
type blockPacker func(dst []float32, w int, src []float32, ld, kc, n int)

func (pairing) depth(kc int) int { return (kc + 1) / 2 }

// packA packs op(A)[i0:i0+mc, p0:p0+kc] into panels of mr rows: a row of
// op(A) is contiguous in A unless transA.
func (pr pairing) packA(im *impl[float32], dst []float32, p problem[float32], i0, p0, mc, kc int) {
	pr.panels(dst, im.mr, mc, kc, !p.transA, p.a[p.offsetA(i0, p0):], p.lda)
}

// packB packs op(B)[p0:p0+kc, j0:j0+nc] into panels of nr columns: a
// column of op(B) is contiguous in B when transB.
func (pr pairing) packB(im *impl[float32], dst []float32, p problem[float32], p0, j0, kc, nc int) {
	pr.panels(dst, im.nr, nc, kc, p.transB, p.b[p.offsetB(p0, j0):], p.ldb)
}

// panels packs n lines of kc elements at src into panels of w lines with
// the packer of their layout.
func (pr pairing) panels(dst []float32, w, n, kc int, contiguous bool, src []float32, ld int) {
	if n == 0 || kc == 0 {
		return
	}
	if contiguous {
		pr.lines(dst, w, src, ld, kc, n)
		return
	}
	pr.strips(dst, w, src, ld, kc, n)
}
