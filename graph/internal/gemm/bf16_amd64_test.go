package gemm

import (
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/cpu"
)

// needBF16 skips t on CPUs without AVX512_BF16.
func needBF16(t *testing.T) {
	t.Helper()
	if !cpu.X86.HasAVX512F || !cpu.X86.HasAVX512BF16 {
		t.Skip("this CPU has no AVX512_BF16: the instructions cannot run here (the encodings are checked by TestBF16Encodings)")
	}
}

// edgeFloats are float32 values at the edges of the rounding (bf16Cases)
// followed by random ones.
func edgeFloats(rng *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		if i < len(bf16Cases) {
			x[i] = math.Float32frombits(bf16Cases[i].in)
		} else {
			x[i] = math.Float32frombits(rng.Uint32())
		}
	}
	return x
}

// TestPairPackersBF16 checks the AVX512_BF16 packers against the Go model,
// bit for bit, on the edge values of the rounding (NaNs, infinities, zeros,
// subnormals, ties) and random bits, in both layouts, for the kernel's
// panel widths and narrower and wider ones, odd and even depths (the zero
// that ends an odd line), whole and partial panels, and lines longer and
// shorter than a register of 32 values.
func TestPairPackersBF16(t *testing.T) {
	needBF16(t)
	x := edgeBits(rand.New(rand.NewPCG(1, 2)))
	for _, w := range []int{12, 32, 4, 7, 16, 20} {
		for _, kc := range []int{1, 2, 31, 32, 33, 64, 97} {
			for _, n := range []int{1, 5, 12, 16, 17, 32, 45, 70} {
				checkPairPackers(t, x[(w*kc*n)%(len(x)/2):], w, kc, n, 3)
			}
		}
	}
}

// checkPairPackers packs n lines of kc elements of src, with leading
// dimension ld = the line's length + extra, in the three layouts (lines
// and strips into panels of pairs, lines into panels by rows) with the
// AVX512_BF16 packers and the Go model, into panels of w lines, and
// compares the two. The panels start filled with NaNs, to show what the
// packers leave unwritten.
func checkPairPackers(t *testing.T, src []float32, w, kc, n, extra int) {
	t.Helper()
	model := pairing{lines: linesVia(convertGo, scatter[float32]), strips: stripsVia(interleaveGo)}
	size := roundUp(n, w) * (kc + 1) / 2
	for _, layout := range []struct {
		name        string
		vector, ref blockPacker
		ld          int
	}{{"lines", pairLinesBF16, model.lines, kc + extra}, {"strips", pairStripsBF16, model.strips, n + extra}, {"rows", pairRowsBF16, pairRowsGo, kc + extra}} {
		got, want := make([]float32, size+16), make([]float32, size+16)
		for i := range got {
			got[i], want[i] = float32(math.NaN()), float32(math.NaN())
		}
		layout.vector(got, w, src, layout.ld, kc, n)
		layout.ref(want, w, src, layout.ld, kc, n)
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%s, w=%d kc=%d n=%d: slot %d is %#08x, want %#08x", layout.name, w, kc, n, i, math.Float32bits(got[i]), math.Float32bits(want[i]))
			}
		}
	}
}

// pairRowsGo is the Go model of pairRowsBF16: slot q of line l holds its
// elements 2q and 2q+1 rounded to bfloat16 (zero past kc), at l·(kc+1)/2.
func pairRowsGo(dst []float32, w int, src []float32, ld, kc, n int) {
	d := (kc + 1) / 2
	clear(dst[:roundUp(n, w)*d])
	for l := range n {
		for q := range d {
			hi := uint32(0)
			if 2*q+1 < kc {
				hi = uint32(ToBF16(src[l*ld+2*q+1]))
			}
			dst[l*d+q] = math.Float32frombits(uint32(ToBF16(src[l*ld+2*q])) | hi<<16)
		}
	}
}

// TestRowsKernelBF16 checks bf16Kernel12x32Rows against bf16Kernel12x32 bit
// for bit: the same pairs (edge values among them), laid out by rows for
// the one and by columns for the other, with and without accumulating, a
// bias and ReLU; and the 8-row kernels of both layouts against the first 8
// rows of bf16Kernel12x32's tile, leaving the other 4 rows of C as they were.
func TestRowsKernelBF16(t *testing.T) {
	needBF16(t)
	rng := rand.New(rand.NewPCG(7, 8))
	for _, k := range []int{1, 2, 3, 16, 129} {
		byCols, byRows, b := make([]float32, 12*k), make([]float32, 12*k), make([]float32, 32*k)
		for i := range byCols {
			byCols[i] = math.Float32frombits(uint32(ToBF16(pick(rng, edgeFloats(rng, 40)))) | uint32(ToBF16(float32(rng.NormFloat64())))<<16)
			byRows[i%12*k+i/12] = byCols[i]
		}
		for i := range b {
			b[i] = math.Float32frombits(uint32(ToBF16(float32(rng.NormFloat64()))) | uint32(ToBF16(float32(rng.NormFloat64())))<<16)
		}
		bias := make([]float32, 32)
		for i := range bias {
			bias[i] = float32(rng.NormFloat64())
		}
		for _, f := range []struct {
			accumulate, relu bool
			bias             *float32
		}{{false, false, nil}, {true, false, nil}, {true, true, &bias[0]}, {false, true, nil}} {
			c0 := make([]float32, 12*32)
			for i := range c0 {
				c0[i] = float32(rng.NormFloat64())
			}
			want := append([]float32(nil), c0...)
			bf16Kernel12x32(k, &byCols[0], &b[0], &want[0], 32, f.accumulate, f.bias, f.relu)
			for _, kern := range []struct {
				name string
				f    finishingKernel[float32]
				a    []float32
				rows int
			}{{"12x32Rows", bf16Kernel12x32Rows, byRows, 12}, {"8x32", bf16Kernel8x32, byCols, 8}, {"8x32Rows", bf16Kernel8x32Rows, byRows, 8}} {
				got := append([]float32(nil), c0...)
				kern.f(k, &kern.a[0], &b[0], &got[0], 32, f.accumulate, f.bias, f.relu)
				for i := range got {
					w := want[i]
					if i >= 32*kern.rows {
						w = c0[i]
					}
					if math.Float32bits(got[i]) != math.Float32bits(w) {
						t.Fatalf("%s k=%d %+v: c[%d] = %#08x, want %#08x", kern.name, k, f, i, math.Float32bits(got[i]), math.Float32bits(w))
					}
				}
			}
		}
	}
}

// TestVDPBF16PS checks the micro-kernel's VDPBF16PS against dpbf16, lane
// by lane, on panels of edge values (NaN, infinities, values that rounded
// from ties, bfloat16 subnormals, which it must read as zero) and random
// ones: NaN and infinities exactly, finite results within float32's
// rounding of the sum (the manual's order of the multiply-adds is a model,
// not a promise of every CPU's).
func TestVDPBF16PS(t *testing.T) {
	needBF16(t)
	rng := rand.New(rand.NewPCG(3, 4))
	for _, k := range []int{1, 2, 3, 8} {
		a, b := make([]float32, 12*k), make([]float32, 32*k)
		subnormals := []uint16{0x0001, 0x8040, 0x007f}
		for i := range a {
			hi := ToBF16(float32(rng.NormFloat64()))
			if i%5 == 0 {
				hi = pick(rng, subnormals)
			}
			a[i] = math.Float32frombits(uint32(ToBF16(pick(rng, edgeFloats(rng, 40)))) | uint32(hi)<<16)
		}
		for i := range b {
			b[i] = math.Float32frombits(uint32(ToBF16(float32(rng.NormFloat64()))) | uint32(ToBF16(pick(rng, edgeFloats(rng, 40))))<<16)
		}
		for _, accumulate := range []bool{false, true} {
			c := make([]float32, 12*32)
			for i := range c {
				c[i] = float32(rng.NormFloat64())
			}
			c0 := append([]float32(nil), c...)
			bf16Kernel12x32(k, &a[0], &b[0], &c[0], 32, accumulate, nil, false)
			for i := range 12 {
				for j := range 32 {
					var want float32
					var abs float64
					for p := range k {
						ap, bp := math.Float32bits(a[12*p+i]), math.Float32bits(b[32*p+j])
						want = dpbf16(want, ap, bp)
						abs += math.Abs(float64(bf16In(ap>>16))*float64(bf16In(bp>>16))) + math.Abs(float64(bf16In(ap&0xffff))*float64(bf16In(bp&0xffff)))
					}
					if accumulate {
						want += c0[i*32+j]
						abs += math.Abs(float64(c0[i*32+j]))
					}
					got := c[i*32+j]
					if !closeBF16(got, want, 2*float64(2*k+2)*0x1p-24*abs) {
						t.Errorf("k=%d accumulate=%t: c[%d,%d] = %g (%#08x), want %g (%#08x)", k, accumulate, i, j, got, math.Float32bits(got), want, math.Float32bits(want))
					}
				}
			}
		}
	}
}

// closeBF16 reports whether got is want, both NaN, or (finite) within
// bound of it.
func closeBF16(got, want float32, bound float64) bool {
	switch {
	case math.IsNaN(float64(want)):
		return math.IsNaN(float64(got))
	case math.IsInf(float64(want), 0):
		return got == want
	}
	return math.Abs(float64(got-want)) <= bound
}

// TestBF16Encodings checks every instruction that kernel_avx512_amd64.s
// and pack_bf16_amd64.s write as bytes (Go's assembler lacks their mnemonics) against the
// instruction its comment names: GNU objdump disassembles the bytes. The
// encodings are checked even where the CPU cannot run them.
func TestBF16Encodings(t *testing.T) {
	objdump, err := exec.LookPath("objdump")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("GNU objdump is missing (apt-get install binutils)")
		}
		t.Skip("no GNU objdump (apt-get install binutils)")
	}
	var src []byte
	for _, name := range []string{"kernel_avx512_amd64.s", "pack_bf16_amd64.s"} {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		src = append(src, b...)
	}
	var code []byte
	var want []string
	for _, line := range strings.Split(string(src), "\n") {
		insn, comment, ok := strings.Cut(strings.TrimSpace(line), " // ")
		if !ok { // a line of a macro: BYTE …; BYTE … /* instruction */; \
			insn, comment, ok = strings.Cut(strings.TrimSpace(line), " /* ")
			comment, _, _ = strings.Cut(comment, " */")
		}
		if !ok || !strings.HasPrefix(insn, "BYTE ") {
			continue
		}
		for _, b := range strings.Split(insn, ";") {
			v, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimSpace(b), "BYTE $"), 0, 8)
			if err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			code = append(code, byte(v))
		}
		// "VDPBF16PS Z8, Z2, Z0" is objdump's "vdpbf16ps zmm8,zmm2,zmm0".
		op, args, _ := strings.Cut(comment, " ")
		args = strings.NewReplacer("Z", "zmm", "Y", "ymm", " ", "").Replace(args)
		want = append(want, strings.ToLower(op)+" "+args)
	}
	if len(want) != 60 {
		t.Fatalf("%d byte-encoded instructions, want 60 (24 VDPBF16PS, 36 VCVTNE2PS2BF16)", len(want))
	}
	raw := t.TempDir() + "/code.bin"
	if err := os.WriteFile(raw, code, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(objdump, "-D", "-b", "binary", "-m", "i386:x86-64", "-M", "intel", "--no-show-raw-insn", raw).Output()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, line := range strings.Split(string(out), "\n") {
		if _, insn, ok := strings.Cut(line, ":\t"); ok {
			got = append(got, strings.Join(strings.Fields(insn), " "))
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the bytes disassemble to\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestRoundAVX2 checks the AVX2 rounding of the widening GEMM's panels
// against RoundBF16, bit for bit, on the edge values and random bits.
func TestRoundAVX2(t *testing.T) {
	if !cpu.X86.HasAVX2 {
		t.Skip("no AVX2")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{8, 23, 24, 1000} { // 24: every edge value in the vector loop
		x := edgeFloats(rng, max(n, len(bf16Cases)))[:n]
		inPlace, apart := append([]float32(nil), x...), make([]float32, n)
		roundAVX2(inPlace, inPlace)
		roundAVX2(apart, x)
		for i, v := range x {
			want := math.Float32bits(RoundBF16(v))
			if got := math.Float32bits(inPlace[i]); got != want || math.Float32bits(apart[i]) != want {
				t.Errorf("n=%d: %#08x rounds to %#08x in place and %#08x apart, want %#08x", n, math.Float32bits(v), got, math.Float32bits(apart[i]), want)
			}
		}
	}
}

// BenchmarkKernel times the AVX-512 micro-kernels alone on panels that stay
// in L1 (k = 128 steps, the tile of C added to): their peak, in GFLOP/s of
// the tile's 2·12·32·k (float32) and 2·12·32·2k (bfloat16 pairs) operations.
func BenchmarkKernel(b *testing.B) {
	if !cpu.X86.HasAVX512F {
		b.Skip("this CPU has no AVX-512F")
	}
	const k = 128
	a, bp, c := make([]float32, 12*k), make([]float32, 32*k), make([]float32, 12*32)
	for _, kern := range []struct {
		name string
		f    microKernel[float32]
		ops  int
		need bool
	}{{"float32", plain(sgemmKernel12x32), 2 * 12 * 32 * k, true}, {"bf16", plain(bf16Kernel12x32), 4 * 12 * 32 * k, cpu.X86.HasAVX512BF16}} {
		b.Run(kern.name, func(b *testing.B) {
			if !kern.need {
				b.Skip("this CPU has no AVX512_BF16")
			}
			for b.Loop() {
				kern.f(k, &a[0], &bp[0], &c[0], 32, true)
			}
			b.ReportMetric(float64(kern.ops)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// TestNativeBF16Kept checks that a CPU with AVX512_BF16 runs the
// VDPBF16PS GEMM: checked falls back to the widening one, silently, when
// the native one computes a product differently in either layout of A.
func TestNativeBF16Kept(t *testing.T) {
	needBF16(t)
	if sbf16 != avx512BF16 {
		t.Fatalf("the bfloat16 GEMM is %s: checked refused avx512bf16", sbf16.name)
	}
}
