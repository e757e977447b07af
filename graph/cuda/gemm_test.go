package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// gemmCases are products of every transposition, shapes that fill no tile,
// padded row strides, a batch, and Beta 0 (C not read: it starts as NaN on
// the simulated device) and not.
func gemmCases() []GEMM {
	var cs []GEMM
	for _, s := range [][4]int{{1, 1, 1, 1}, {7, 5, 3, 1}, {33, 17, 65, 1}, {9, 12, 31, 3}} {
		for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			m, n, k := s[0], s[1], s[2]
			g := GEMM{TransA: tr[0], TransB: tr[1], M: m, N: n, K: k, Alpha: 1.5, Batch: s[3], LDA: k + 2, LDB: n + 1, LDC: n + 3}
			if g.TransA {
				g.LDA = m + 2
			}
			if g.TransB {
				g.LDB = k + 1
			}
			if s[3] > 1 {
				g.Beta = 0.5
			}
			cs = append(cs, g)
		}
	}
	return cs
}

// TestGemm checks float32 and bfloat16 products against gemmRef; the
// bfloat16 inputs are to_bf16's, read back, so the reference sums the same
// values.
func TestGemm(t *testing.T) {
	for _, d := range devices(t) {
		for _, bf16 := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/bf16=%t", d.Name(), bf16), func(t *testing.T) {
				e := &env{t: t, d: d, seen: map[string]bool{}}
				r := rand.New(rand.NewPCG(10, 1))
				for _, g := range gemmCases() {
					testGemm(e, r, g, bf16, false)
					if g.Batch > 1 {
						testGemm(e, r, g, bf16, true)
					}
				}
			})
		}
	}
}

// testGemm runs g on random matrices; with sharedB, one B serves the whole
// batch (StrideB 0).
func testGemm(e *env, r *rand.Rand, g GEMM, bf16, sharedB bool) {
	rows := func(trans bool, r, c int) int {
		if trans {
			return c
		}
		return r
	}
	g.StrideA, g.StrideB, g.StrideC = rows(g.TransA, g.M, g.K)*g.LDA, rows(g.TransB, g.K, g.N)*g.LDB, g.M*g.LDC
	na := g.Batch * g.StrideA
	nb, nc := g.Batch*g.StrideB, g.Batch*g.StrideC
	if sharedB {
		nb, g.StrideB = g.StrideB, 0
	}
	a, b, c := randn(r, na, 1), randn(r, nb, 1), randn(r, nc, 1)
	g.A, g.B, g.C = e.upload(a), e.upload(b), e.alloc(nc)
	if g.Beta != 0 {
		if err := e.d.ToDevice(g.C, Float32Bytes(c)); err != nil {
			e.t.Fatal(err)
		}
	}
	if bf16 {
		g.BF16 = true
		g.A, a = e.toBF16(g.A, na)
		g.B, b = e.toBF16(g.B, nb)
	}
	if err := e.d.Gemm(g); err != nil {
		e.t.Fatal(err)
	}
	got, want := e.download(g.C, nc), gemmRef(g, f64(a), f64(b), f64(c))
	// Only C's elements inside its rows' N columns are the product's.
	var gs []float32
	var ws []float64
	for i := range got {
		if i%g.StrideC/g.LDC < g.M && i%g.LDC < g.N {
			gs, ws = append(gs, got[i]), append(ws, want[i])
		}
	}
	near(e.t, fmt.Sprintf("gemm %+v", g), gs, ws, e.d.tol)
}

// toBF16 rounds n floats at p to bfloat16 on the device, returning them
// there and, widened again, here.
func (e *env) toBF16(p Ptr, n int) (Ptr, []float32) {
	e.t.Helper()
	h := e.alloc((n + 1) / 2)
	e.launch("to_bf16", 4, 256, h, p, n)
	bits := make([]uint16, n)
	if err := e.d.ToHost(Uint16Bytes(bits), h); err != nil {
		e.t.Fatal(err)
	}
	x := make([]float32, n)
	for i, v := range bits {
		x[i] = math.Float32frombits(uint32(v) << 16)
	}
	return h, x
}
