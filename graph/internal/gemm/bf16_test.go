package gemm

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
	"unsafe"
)

// bf16Cases are float32 bit patterns at the edges of the rounding, and
// what ToBF16 must make of them.
var bf16Cases = []struct{ in, want uint32 }{
	{0x3f800000, 0x3f80}, // 1
	{0xbf800000, 0xbf80}, // -1
	{0x3f808000, 0x3f80}, // 1 + 2^-8: a tie, to the even 1
	{0x3f818000, 0x3f82}, // a tie, to the even 1 + 2^-6
	{0x3f808001, 0x3f81}, // just above a tie: up
	{0x3f807fff, 0x3f80}, // just below: down
	{0xbf818000, 0xbf82}, // a negative tie
	{0x7f7fffff, 0x7f80}, // the largest float32 rounds to infinity
	{0x7f7f7fff, 0x7f7f}, // the largest one that does not
	{0x7f800000, 0x7f80}, // +Inf
	{0xff800000, 0xff80}, // -Inf
	{0x7fc00000, 0x7fc0}, // quiet NaN
	{0x7f800001, 0x7fc0}, // signalling NaN, made quiet
	{0xff812345, 0xffc1}, // negative NaN keeps its sign and top bits
	{0x7fffffff, 0x7fff}, // NaN with every fraction bit
	{0x00000000, 0x0000}, // +0
	{0x80000000, 0x8000}, // -0
	{0x00000001, 0x0000}, // smallest subnormal: zero
	{0x807fffff, 0x8000}, // largest negative subnormal: -0
	{0x00800000, 0x0080}, // smallest normal
	{0x00ff8000, 0x0100}, // a tie that rounds up into the next binade
	{0x3fffffff, 0x4000}, // rounds up into the next binade
}

func TestToBF16(t *testing.T) {
	for _, c := range bf16Cases {
		if got := ToBF16(math.Float32frombits(c.in)); uint32(got) != c.want {
			t.Errorf("ToBF16(%#08x) = %#04x, want %#04x", c.in, got, c.want)
		}
	}
	// Every normal value rounds to the nearer of its two neighbours.
	rng := rand.New(rand.NewPCG(1, 1))
	for range 100000 {
		b := rng.Uint32()
		x := math.Float32frombits(b)
		if b&0x7f800000 == 0 || b&0x7f800000 == 0x7f800000 {
			continue
		}
		lo, hi := FromBF16(uint16(b>>16)), FromBF16(uint16(b>>16)+1)
		// Past the largest bfloat16 the next value up is infinity, which
		// rounding reaches from half way to 2^128.
		hiv := float64(hi)
		if math.IsInf(hiv, 0) {
			hiv = math.Copysign(math.Ldexp(1, 128), hiv)
		}
		dlo, dhi := math.Abs(float64(x)-float64(lo)), math.Abs(float64(x)-hiv)
		want := lo
		if dhi < dlo || dhi == dlo && (b>>16)&1 == 1 {
			want = hi
		}
		if got := RoundBF16(x); got != want {
			t.Fatalf("RoundBF16(%#08x) = %g, want %g", b, got, want)
		}
	}
}

// bf16In is the float32 value VDPBF16PS sees for the bfloat16 h: subnormals
// are zero (DAZ).
func bf16In(h uint32) float32 {
	if h&0x7f80 == 0 {
		return FromBF16(uint16(h & 0x8000))
	}
	return FromBF16(uint16(h))
}

// fmaFTZ is acc + x·y rounded once to float32 (x·y of two bfloat16 values
// is exact in float64, and so the float64 sum rounds to float32 correctly),
// with a subnormal result flushed to zero.
func fmaFTZ(x, y, acc float32) float32 {
	r := float32(float64(x)*float64(y) + float64(acc))
	if math.Float32bits(r)&0x7f800000 == 0 {
		return float32(math.Copysign(0, float64(r)))
	}
	return r
}

// dpbf16 is one lane of VDPBF16PS as Intel's manual defines it: the high
// pair then the low pair, each a fused multiply-add.
func dpbf16(acc float32, a, b uint32) float32 {
	acc = fmaFTZ(bf16In(a>>16), bf16In(b>>16), acc)
	return fmaFTZ(bf16In(a&0xffff), bf16In(b&0xffff), acc)
}

// pairKernel returns a microKernel for mr×nr tiles from panels of bfloat16
// pairs, built on dpbf16: the reference the pairing packers and the driver
// are checked with on any CPU.
func pairKernel(mr, nr int) microKernel[float32] {
	return func(k int, a, b, c *float32, ldc int, accumulate bool) {
		as, bs := unsafe.Slice(a, mr*k), unsafe.Slice(b, nr*k)
		cs := unsafe.Slice(c, (mr-1)*ldc+nr)
		for i := range mr {
			for j := range nr {
				var v float32
				for p := range k {
					v = dpbf16(v, math.Float32bits(as[mr*p+i]), math.Float32bits(bs[nr*p+j]))
				}
				if accumulate {
					v += cs[i*ldc+j]
				}
				cs[i*ldc+j] = v
			}
		}
	}
}

// goPairs is the bfloat16 GEMM of pairKernel and Go packers.
var goPairs = &impl[float32]{name: "go-pairs", mr: 4, nr: 4, mc: 128, kc: 512, nc: 4096, kernel: pairKernel(4, 4),
	gather: gather[float32], scatter: scatter[float32], panels: pairing{lines: linesVia(convertGo, scatter[float32]), strips: stripsVia(interleaveGo)}}

// vectorRounds are this CPU's vector roundings (bf16_vector_amd64_test.go).
var vectorRounds []func(dst, src []float32)

// vectorPairs are bfloat16 GEMMs of pairKernel and this CPU's vector
// packers (bf16_vector_amd64_test.go), checked on CPUs that cannot run
// VDPBF16PS.
var vectorPairs []*impl[float32]

// bf16Impls are the bfloat16 GEMMs this machine can run, each also with
// tiny blocks: the widening ones of every float32 kernel with the Go
// rounding (the path of CPUs without vectors) and of this CPU's with every
// vector rounding, the pairs ones of Go and vector packers (on
// little-endian machines, whose pairs have their first element in the low
// half), and SgemmBF16's.
func bf16Impls() []*impl[float32] {
	var ims []*impl[float32]
	for _, im := range sgemms {
		ims = append(ims, widening(im, roundGo))
	}
	for _, round := range vectorRounds {
		ims = append(ims, widening(sgemm, round))
	}
	if binary.NativeEndian.Uint16([]byte{1, 0}) == 1 {
		ims = append(ims, goPairs)
		ims = append(ims, vectorPairs...)
	}
	if sbf16.panels != nil && !slices.ContainsFunc(ims, func(im *impl[float32]) bool { return im.name == sbf16.name }) {
		ims = append(ims, sbf16)
	}
	return allVariants(ims)
}

// checkBF16 checks tc through run against the product of the inputs
// rounded to bfloat16.
func checkBF16(t *testing.T, name string, run func(problem[float32]), tc testCase, rng *rand.Rand) {
	t.Helper()
	checkOf(t, name, run, tc, rng, RoundBF16)
}

func TestSgemmBF16(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, im := range bf16Impls() {
		for _, tA := range []bool{false, true} {
			for _, tB := range []bool{false, true} {
				for range 60 {
					tc := testCase{tA, tB, pick(rng, sizes), pick(rng, sizes), pick(rng, sizes),
						pick(rng, []int{0, 0, 3}), pick(rng, []float64{0, 1, -0.5})}
					checkBF16(t, im.name, im.run, tc, rng)
				}
			}
		}
	}
}

// TestPackedBF16 checks bfloat16 products with B packed beforehand, in
// bands of rows and of columns, and SgemmBF16 on products larger than the
// blocks, on several goroutines.
func TestPackedBF16(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	rng := rand.New(rand.NewPCG(9, 10))
	large := []testCase{{false, true, 40, 600, 130, 0, 0}, {true, false, 700, 60, 33, 1, 1}, {true, false, 2100, 24, 33, 0, 0.5}, {true, false, 768, 40, 50, 0, 1}, {false, false, 40, 70, 1031, 0, 0.5},
		{false, true, 32, 40, 48, 0, 0}, {true, false, 32, 33, 31, 2, 1}, {false, false, 20, 64, 17, 0, -0.5}} // last panels of exactly 8 rows
	for _, im := range bf16Impls() {
		packed := func(p problem[float32]) {
			pb := pack(im, p.transB, p.k, p.n, p.b, p.ldb)
			p.b, p.ldb = nil, 0
			pb.run(p)
		}
		for _, tc := range append(large, testCase{true, true, 33, 47, 25, 3, 0}, testCase{false, false, 12, 64, 7, 0, 1}) {
			checkBF16(t, im.name+"-packed", packed, tc, rng)
			checkBF16(t, im.name, im.run, tc, rng)
		}
	}
	tc := testCase{false, true, 9, 70, 33, 0, 0.5}
	checkBF16(t, "PackBF16B", func(p problem[float32]) {
		SgemmPacked(p.transA, p.m, p.a, p.lda, PackBF16B(p.transB, p.k, p.n, p.b, p.ldb), p.beta, p.c, p.ldc, Epilogue[float32]{})
	}, tc, rng)
	checkBF16(t, "SgemmBF16", func(p problem[float32]) {
		SgemmBF16(p.transA, p.transB, p.m, p.n, p.k, p.a, p.lda, p.b, p.ldb, p.beta, p.c, p.ldc, Epilogue[float32]{})
	}, testCase{true, false, 64, 70, 60, 2, 0}, rng)
}

// TestSmallBF16IsFloat32 checks that SgemmBF16 computes the products that
// BF16Pays refuses (up to four rows, an inner dimension below 16, fewer
// than 16³ multiply-adds) as Sgemm does, bit for bit, and rounds those it
// takes.
func TestSmallBF16IsFloat32(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	for _, s := range [][3]int{{4, 100, 100}, {5, 100, 100}, {100, 100, 15}, {100, 100, 16}, {12, 12, 12}, {16, 16, 16}, {1, 512, 512}, {100, 5, 100}} {
		m, n, k := s[0], s[1], s[2]
		a, b := random[float32](rng, m, k, k), random[float32](rng, k, n, n)
		got, want := make([]float32, m*n), make([]float32, m*n)
		SgemmBF16(false, false, m, n, k, a, k, b, n, 0, got, n, Epilogue[float32]{})
		Sgemm(false, false, m, n, k, a, k, b, n, 0, want, n)
		if same := slices.Equal(got, want); same == BF16Pays(m, n, k) {
			t.Errorf("%dx%dx%d: BF16Pays %t, yet the product equals float32's: %t", m, n, k, BF16Pays(m, n, k), same)
		}
	}
}

// TestBF16Specials checks that NaNs and infinities reach C through every
// bfloat16 GEMM, and that subnormal inputs count as zero.
func TestBF16Specials(t *testing.T) {
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	tiny := math.Float32frombits(0x00400000) // subnormal: rounds to 0
	for _, im := range bf16Impls() {
		const m, n, k = 13, 33, 5
		a, b, c := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
		for i := range a {
			a[i] = 1
		}
		for i := range b {
			b[i] = tiny
		}
		b[0*n+1], b[1*n+2], b[2*n+3] = inf, nan, inf
		b[3*n+3] = -inf // inf - inf
		im.run(problem[float32]{m: m, n: n, k: k, a: a, lda: k, b: b, ldb: n, c: c, ldc: n})
		for i := range m {
			row := c[i*n:][:n]
			if !math.IsInf(float64(row[1]), 1) || !math.IsNaN(float64(row[2])) || !math.IsNaN(float64(row[3])) {
				t.Errorf("%s: row %d has %v, %v, %v, want +Inf, NaN, NaN", im.name, i, row[1], row[2], row[3])
			}
			for j := 4; j < n; j++ {
				if row[j] != 0 {
					t.Errorf("%s: c[%d,%d] = %g from subnormal inputs, want 0", im.name, i, j, row[j])
				}
			}
		}
	}
}

// TestCheckedRefusesAWrongKernel checks the self-check that guards the
// AVX512_BF16 kernel: a kernel that computes the same products is taken,
// one that computes wrongly (here, one that drops the last pair of the
// inner dimension's slots) is replaced by the fallback.
func TestCheckedRefusesAWrongKernel(t *testing.T) {
	fallback := widening(goSgemm, roundGo)
	if got := checked(widening(goSgemm, roundGo), fallback); got == fallback {
		t.Error("a correct kernel was refused")
	}
	wrong := widening(goSgemm, roundGo)
	right := wrong.kernel
	wrong.kernel = func(k int, a, b, c *float32, ldc int, accumulate bool) { right(max(k-1, 1), a, b, c, ldc, accumulate) }
	if got := checked(wrong, fallback); got != fallback {
		t.Error("a wrong kernel was taken")
	}
}

// TestRepackBF16B checks that RepackBF16B packs a new B into the memory of
// a copy of the same sizes, which then computes products with the new B,
// and makes a new copy for other sizes.
func TestRepackBF16B(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	const m, n, k = 50, 70, 60
	b1, b2 := random[float32](rng, k, n, n), random[float32](rng, k, n, n)
	pb := PackBF16B(false, k, n, b1, n)
	if again := RepackBF16B(pb, false, k, n, b2, n); again != pb {
		t.Fatal("a copy of the same sizes was not reused")
	}
	checkBF16(t, "RepackBF16B", func(p problem[float32]) {
		// p's own B, packed into the memory of b2's copy.
		SgemmPacked(p.transA, p.m, p.a, p.lda, RepackBF16B(pb, p.transB, p.k, p.n, p.b, p.ldb), p.beta, p.c, p.ldc, Epilogue[float32]{})
	}, testCase{false, false, m, n, k, 0, 0}, rng)
	if other := RepackBF16B(pb, false, k-1, n, b1, n); other == pb || other.k != k-1 {
		t.Error("a copy of other sizes was reused")
	}
}

// The Go model of the pairing packers, the reference the AVX512_BF16 ones
// are checked against.

// convertGo writes ToBF16(src[i]) to dst[i]; dst is at least as long as
// src.
func convertGo(dst []uint16, src []float32) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = ToBF16(v)
	}
}

// linesVia returns a lines packer that rounds each line with convert into
// a scratch row, whose slots are then its pairs as they come, and moves
// the rows into a panel with scatter (a transposition): the Go model, and
// the AVX-512F packer of CPUs without AVX512_BF16.
func linesVia(convert func(dst []uint16, src []float32), scatter packer[float32]) blockPacker {
	rows := &sync.Pool{} // of *[]float32
	return func(dst []float32, w int, src []float32, ld, kc, n int) {
		d := (kc + 1) / 2
		buf, _ := rows.Get().(*[]float32)
		if buf == nil || cap(*buf) < w*d {
			s := make([]float32, w*d)
			buf = &s
		}
		for l := 0; l < n; l += w {
			lines, panel := min(w, n-l), dst[l*d:(l+w)*d]
			if lines < w {
				clear(panel)
			}
			for r := range lines {
				line := (*buf)[r*d : (r+1)*d]
				line[d-1] = 0 // the zero that ends an odd line
				convert(halves(line)[:kc], src[(l+r)*ld:][:kc])
			}
			scatter(panel, w, *buf, d, lines, d)
		}
		rows.Put(buf)
	}
}

// stripsVia returns a strips packer that packs each panel with interleave.
func stripsVia(interleave func(dst []float32, w int, src []float32, ld, kc, width int)) blockPacker {
	return func(dst []float32, w int, src []float32, ld, kc, n int) {
		d := (kc + 1) / 2
		for l := 0; l < n; l += w {
			lines, panel := min(w, n-l), dst[l*d:(l+w)*d]
			if lines < w {
				clear(panel)
			}
			interleave(panel, w, src[l:], ld, kc, lines)
		}
	}
}

// interleaveGo packs kc rows of width elements each, row q at src[q·ld:],
// as the panel dst of width w: slot q of column j holds rows 2q (low half)
// and 2q+1 (high half) of column j, rounded by ToBF16; the last row of an
// odd kc pairs with zero.
func interleaveGo(dst []float32, w int, src []float32, ld, kc, width int) {
	for q := 0; q < kc; q += 2 {
		row, even := dst[q/2*w:][:width], src[q*ld:][:width]
		if q+1 == kc {
			for j, v := range even {
				row[j] = math.Float32frombits(uint32(ToBF16(v)))
			}
			continue
		}
		odd := src[(q+1)*ld:][:width]
		for j, v := range even {
			row[j] = math.Float32frombits(uint32(ToBF16(v)) | uint32(ToBF16(odd[j]))<<16)
		}
	}
}

// halves is s's memory as bfloat16 values, two per slot, low half first.
func halves(s []float32) []uint16 {
	return unsafe.Slice((*uint16)(unsafe.Pointer(unsafe.SliceData(s))), 2*len(s))
}
