package vrow

import (
	"math"
	"math/rand/v2"
	"testing"
)

// lengths cover rows shorter than one vector, tails of every size and
// long rows.
var lengths = []int{1, 7, 8, 9, 15, 16, 17, 31, 33, 64, 255, 256, 1000}

func randomRow(rng *rand.Rand, n int, scale float64) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32((2*rng.Float64() - 1) * scale)
	}
	return x
}

// inOrder sums term(i) for i < n as the package documents: term i into
// partial i mod 16, then the partials pairwise.
func inOrder(n int, term func(i int) float64) float64 {
	var p [lanes]float64
	for i := range n {
		p[i%lanes] += term(i)
	}
	for w := lanes / 2; w >= 1; w /= 2 {
		for i := range w {
			p[i] += p[i+w]
		}
	}
	return p[0]
}

// TestSums checks every sum against the documented order bit for bit, and
// against float64 arithmetic in the plain order within a rounding bound.
func TestSums(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range lengths {
		a, b, x := randomRow(rng, n, 3), randomRow(rng, n, 3), randomRow(rng, n, 50)
		c := 0.37
		for _, s := range []struct {
			name string
			got  float64
			term func(i int) float64
		}{
			{"Sum", Sum(x), func(i int) float64 { return float64(x[i]) }},
			{"Dot", Dot(a, b), func(i int) float64 { return float64(a[i] * b[i]) }},
			{"SquaresAbout", SquaresAbout(x, c), func(i int) float64 { d := float64(x[i]) - c; return float64(d * d) }},
			{"DotAbout", DotAbout(a, b, x, c), func(i int) float64 { return float64(float64(a[i]*b[i]) * (float64(x[i]) - c)) }},
		} {
			if want := inOrder(n, s.term); s.got != want {
				t.Errorf("%s, n %d: %v, want %v in the documented order", s.name, n, s.got, want)
			}
			var plain, size float64
			for i := range n {
				plain += s.term(i)
				size += math.Abs(s.term(i))
			}
			if math.Abs(s.got-plain) > float64(n)*0x1p-52*size {
				t.Errorf("%s, n %d: %v, far from %v", s.name, n, s.got, plain)
			}
		}
	}
}

// TestNormalize checks Normalize, with and without a bias, and
// NormalizeGrad element by element against their formulas.
func TestNormalize(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const mean, rstd, md, mdx = 0.25, 1.7, -0.03, 0.41
	for _, n := range lengths {
		x, g, b, dy := randomRow(rng, n, 4), randomRow(rng, n, 2), randomRow(rng, n, 1), randomRow(rng, n, 1)
		y, yb, dx := make([]float32, n), make([]float32, n), make([]float32, n)
		Normalize(y, x, g, nil, mean, rstd)
		Normalize(yb, x, g, b, mean, rstd)
		NormalizeGrad(dx, x, g, dy, mean, rstd, md, mdx)
		for i := range x {
			xh := float32((float64(x[i]) - mean) * rstd)
			gx := float32(g[i] * xh)
			if y[i] != gx || yb[i] != gx+b[i] {
				t.Fatalf("n %d, element %d: Normalize %v and %v with bias, want %v and %v", n, i, y[i], yb[i], gx, gx+b[i])
			}
			xh64 := (float64(x[i]) - mean) * rstd
			want := float32(rstd * (float64(g[i]*dy[i]) - md - float64(xh64*mdx)))
			if dx[i] != want {
				t.Fatalf("n %d, element %d: NormalizeGrad %v, want %v", n, i, dx[i], want)
			}
		}
	}
}

func BenchmarkNormalize(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	x, g, bias := randomRow(rng, 256, 2), randomRow(rng, 256, 1), randomRow(rng, 256, 1)
	y := make([]float32, 256)
	b.SetBytes(256 * 4)
	for b.Loop() {
		mean := Sum(x) / 256
		rstd := 1 / math.Sqrt(SquaresAbout(x, mean)/256+1e-5)
		Normalize(y, x, g, bias, mean, rstd)
	}
}

// TestElementwise checks Scale, Add, ReLU and ReLUGrad element by element, over
// signed zeros, infinities and NaNs of both signs as well as random values.
func TestElementwise(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	negNaN := math.Float32frombits(0xffc00000)
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), negNaN, 1e-45, -1e-45}
	same := func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }
	for _, n := range lengths {
		x, a, b := randomRow(rng, n, 2), randomRow(rng, n, 2), randomRow(rng, n, 2)
		for i := range x {
			if i%3 == 0 {
				x[i] = special[rng.IntN(len(special))]
			}
		}
		y, r, dx := make([]float32, n), make([]float32, n), make([]float32, n)
		s := make([]float32, n)
		Scale(s, a, 0.37)
		for i := range s {
			if !same(s[i], 0.37*a[i]) {
				t.Fatalf("n %d: Scale gives %v at %d, want %v", n, s[i], i, 0.37*a[i])
			}
		}
		Add(y, a, b)
		ReLU(r, x)
		ReLUGrad(dx, x, a)
		for i, v := range x {
			wantR, wantD := v, a[i]
			if math.Signbit(float64(v)) {
				wantR = 0
			}
			if !(v > 0 || (v != v && !math.Signbit(float64(v)))) {
				wantD = 0
			}
			if !same(y[i], a[i]+b[i]) || !same(r[i], wantR) || !same(dx[i], wantD) {
				t.Fatalf("n %d, element %d (x %v): Add %v, ReLU %v, ReLUGrad %v; want %v, %v, %v", n, i, v, y[i], r[i], dx[i], a[i]+b[i], wantR, wantD)
			}
		}
		Add(a, a, b) // in place
		for i := range a {
			if !same(a[i], y[i]) {
				t.Fatalf("n %d: Add in place differs at %d", n, i)
			}
		}
	}
}

// TestScaleMasked checks ScaleMasked element by element against its
// definition, over random masks (and all-ones and all-zeros words), special
// values and every tail length, and in place.
func TestScaleMasked(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	special := []float32{float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 1e-45, 3e38}
	for _, n := range append(lengths, 64, 128, 130, 64*9+5) {
		x := randomRow(rng, n, 2)
		for i := range x {
			if i%5 == 0 {
				x[i] = special[rng.IntN(len(special))]
			}
		}
		mask := make([]int, (n+63)/64)
		for w := range mask {
			switch w % 3 {
			case 0:
				mask[w] = int(rng.Uint64())
			case 1:
				mask[w] = -1
			}
		}
		y := make([]float32, n)
		ScaleMasked(y, x, mask, 1.25)
		for i, v := range x {
			want := float32(0)
			if mask[i/64]>>(i%64)&1 == 1 {
				want = 1.25 * v
			}
			if math.Float32bits(y[i]) != math.Float32bits(want) {
				t.Fatalf("n %d, element %d (x %v, bit %d): %v, want %v", n, i, v, mask[i/64]>>(i%64)&1, y[i], want)
			}
		}
		ScaleMasked(x, x, mask, 1.25)
		for i := range x {
			if math.Float32bits(x[i]) != math.Float32bits(y[i]) {
				t.Fatalf("n %d: in place differs at %d", n, i)
			}
		}
	}
}
