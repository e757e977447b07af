package gemm

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"golang.org/x/sys/cpu"
)

func init() {
	if cpu.X86.HasAVX2 {
		vectorRounds = append(vectorRounds, roundAVX2)
	}
	if cpu.X86.HasAVX512F {
		vectorRounds = append(vectorRounds, roundAVX512)
	}
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512BF16 {
		vectorPairs = append(vectorPairs, &impl[float32]{name: "avx512bf16-pairs", mr: 12, nr: 32, mc: 192, kc: 512, nc: 4096,
			kernel: pairKernel(12, 32), gather: gatherAVX, scatter: scatterAVX, panels: avx512Pairing})
	}
}

// needAVX512 skips t on CPUs without AVX-512F.
func needAVX512(t testing.TB) {
	t.Helper()
	if !cpu.X86.HasAVX512F {
		t.Skip("this CPU has no AVX-512F: the vector rounding cannot run here (the Go one is checked everywhere)")
	}
}

// edgeBits is every upper half of a float32 (every sign, exponent and
// bfloat16 fraction) with the lower halves at which rounding turns: 0, 1,
// just below, at and just above the tie, and the largest, then random bits.
func edgeBits(rng *rand.Rand) []float32 {
	lows := []uint32{0, 1, 0x7fff, 0x8000, 0x8001, 0xfffe, 0xffff}
	x := make([]float32, 0, 1<<16*(len(lows)+1))
	for hi := range uint32(1 << 16) {
		for _, lo := range lows {
			x = append(x, math.Float32frombits(hi<<16|lo))
		}
		x = append(x, math.Float32frombits(hi<<16|rng.Uint32()&0xffff))
	}
	return x
}

// checkVector checks roundAVX512 on src against RoundBF16, bit for bit,
// reporting at most a few differences.
func checkVector(t *testing.T, src []float32) {
	t.Helper()
	rounded := make([]float32, len(src)+1)
	roundAVX512(rounded, src)
	bad := 0
	for i, v := range src {
		if got, want := math.Float32bits(rounded[i]), math.Float32bits(RoundBF16(v)); got != want && bad < 5 {
			bad++
			t.Errorf("n=%d: roundAVX512 makes %#08x of %#08x, want %#08x", len(src), got, math.Float32bits(v), want)
		}
	}
	if rounded[len(src)] != 0 {
		t.Errorf("n=%d: the vector rounding wrote past its end", len(src))
	}
}

// TestVectorBF16Exhaustive checks the AVX-512F rounding of every upper
// half of a float32 with the lower halves at which rounding turns (NaNs,
// infinities, zeros, subnormals, ties), in one long run and in runs of
// every length up to 48, which end in masked tails.
func TestVectorBF16Exhaustive(t *testing.T) {
	needAVX512(t)
	x := edgeBits(rand.New(rand.NewPCG(11, 12)))
	checkVector(t, x)
	for n := range 49 {
		for at := 0; at+n <= len(x); at += 4099 * (n + 1) {
			checkVector(t, x[at:at+n])
		}
	}
}

// FuzzVectorBF16 compares the AVX-512F rounding with the scalar one, and
// on CPUs with AVX512_BF16 the pairing packers with the Go model, on
// arbitrary bits, lengths and layouts.
func FuzzVectorBF16(f *testing.F) {
	f.Add([]byte{0x00, 0x80, 0x80, 0x3f, 0x01, 0x00, 0x80, 0x7f, 0xff, 0xff, 0xff, 0xff}, uint8(3), uint8(1))
	f.Add(make([]byte, 4*100), uint8(17), uint8(5))
	f.Fuzz(func(t *testing.T, data []byte, width, extra uint8) {
		needAVX512(t)
		src := make([]float32, len(data)/4)
		for i := range src {
			src[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		}
		checkVector(t, src)
		if !cpu.X86.HasAVX512BF16 {
			return
		}
		w, kc, e := int(width)%40+1, int(extra)%70+1, int(extra)%5
		n := len(src) / (kc + e) // lines of kc+e values, and strips of n+e
		for n > 0 && (kc-1)*(n+e)+n > len(src) {
			n--
		}
		if n > 0 {
			checkPairPackers(t, src, w, kc, n, e)
		}
	})
}

// TestPairingAllocates checks that the pairing packers allocate nothing
// once their scratch rows exist: each packed line of a transposed or
// strided operand used to allocate.
func TestPairingAllocates(t *testing.T) {
	needAVX512(t)
	if raceEnabled {
		t.Skip("allocation counts under the race detector include the items its sync.Pool drops at random")
	}
	for _, im := range append([]*impl[float32]{goPairs}, vectorPairs...) {
		rng := rand.New(rand.NewPCG(13, 14))
		const m, n, k = 50, 70, 40
		a, b := make([]float32, m*k), make([]float32, k*n)
		for i := range a {
			a[i] = float32(rng.NormFloat64())
		}
		for i := range b {
			b[i] = float32(rng.NormFloat64())
		}
		dst := make([]float32, 1<<14)
		for _, tr := range []bool{false, true} {
			p := problem[float32]{transA: tr, transB: tr, m: m, n: n, k: k, a: a, lda: k, b: b, ldb: n}
			if tr {
				p.lda, p.ldb = m, k
			}
			allocs := testing.AllocsPerRun(20, func() {
				im.packA(dst, &p, 0, 0, m, k)
				im.packB(dst, &p, 0, 0, k, n)
			})
			if allocs != 0 {
				t.Errorf("%s, transposed %t: packing allocates %v times", im.name, tr, allocs)
			}
		}
	}
}

// BenchmarkPackBF16 times the packing of a 192×512 block of A and a
// 512×256 block of B into panels of bfloat16 pairs for the 12×32 kernel,
// with the Go model and the AVX512_BF16 packers, in each layout: NN (A's
// lines contiguous, B's strided), TN (both strided: weight gradients) and
// NT (both contiguous).
func BenchmarkPackBF16(b *testing.B) {
	if !cpu.X86.HasAVX512BF16 {
		b.Skip("this CPU has no AVX512_BF16")
	}
	const mc, kc, nc = 192, 512, 256
	a, bm := make([]float32, mc*kc), make([]float32, kc*nc)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range a {
		a[i] = float32(rng.NormFloat64())
	}
	for i := range bm {
		bm[i] = float32(rng.NormFloat64())
	}
	dst := make([]float32, kc*nc)
	for _, packers := range []struct {
		name string
		p    pairing
	}{{"go", pairing{lines: linesVia(convertGo, scatter[float32]), strips: stripsVia(interleaveGo)}}, {"avx512bf16", avx512Pairing}} {
		im := &impl[float32]{mr: 12, nr: 32, mc: mc, kc: kc, nc: nc, gather: gatherAVX, scatter: scatterAVX, panels: packers.p}
		for _, layout := range []struct {
			name   string
			tA, tB bool
		}{{"NN", false, false}, {"TN", true, false}, {"NT", false, true}} {
			p := problem[float32]{transA: layout.tA, transB: layout.tB, m: mc, n: nc, k: kc, a: a, lda: kc, b: bm, ldb: nc}
			if layout.tA {
				p.lda = mc
			}
			if layout.tB {
				p.ldb = kc
			}
			b.Run(packers.name+"/"+layout.name, func(b *testing.B) {
				b.SetBytes(4 * (mc*kc + kc*nc))
				for range b.N {
					im.packA(dst, &p, 0, 0, mc, kc)
					im.packB(dst, &p, 0, 0, kc, nc)
				}
			})
		}
	}
}

// BenchmarkRoundBF16 times the widening GEMM's roundings on rows of 12
// (a transposed block of A, row by row), 100 and 4096 values.
func BenchmarkRoundBF16(b *testing.B) {
	needAVX512(b)
	for _, n := range []int{12, 100, 4096} {
		src, dst := random[float32](rand.New(rand.NewPCG(1, 2)), 1, n, n), make([]float32, n)
		for _, r := range []struct {
			name  string
			round func(dst, src []float32)
		}{{"go", roundGo}, {"avx2", roundAVX2}, {"avx512", roundAVX512}} {
			b.Run(fmt.Sprintf("%s/%d", r.name, n), func(b *testing.B) {
				b.SetBytes(int64(4 * n))
				for range b.N {
					r.round(dst, src)
				}
			})
		}
	}
}
