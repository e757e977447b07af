package vexp

import (
	"math"
	"math/rand/v2"
	"testing"
)

// softmaxSteps is Softmax one step at a time: the scaled and masked row,
// its maximum, the exponentials and their sum, and the product by the
// sum's inverse.
func softmaxSteps(x, mask []float32, scale float32) []float32 {
	z := make([]float32, len(x))
	for j, v := range x {
		z[j] = scale * v
		if mask != nil {
			z[j] += mask[j]
		}
	}
	normalize(z)
	return z
}

// TestSoftmax compares Softmax with float64's softmax, and bit for bit with
// softmaxSteps where that does the same arithmetic (rows of whole vectors,
// or no AVX2), over lengths with every size of last vector, with and
// without a mask, in place and not, with and without AVX2.
func TestSoftmax(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ninf := float32(math.Inf(-1))
	for _, avx := range []bool{haveAVX2, false} {
		for n := 1; n <= 41; n++ {
			x, mask := make([]float32, n), make([]float32, n)
			for j := range x {
				x[j] = float32(rng.NormFloat64() * 8)
				if j > 0 && rng.IntN(4) == 0 {
					mask[j] = ninf
				}
			}
			for _, m := range [][]float32{nil, mask} {
				got, want := make([]float32, n), []float32(nil)
				withAVX2(avx, func() { Softmax(got, x, m, 0.25); want = softmaxSteps(x, m, 0.25) })
				checkSoftmax(t, n, got, x, m, 0.25)
				if (n%8 == 0 || !avx) && !equal(got, want) {
					t.Errorf("n %d mask %t: %v, step by step %v", n, m != nil, got, want)
				}
				inPlace := append([]float32(nil), x...)
				withAVX2(avx, func() { Softmax(inPlace, inPlace, m, 0.25) })
				if !equal(inPlace, got) {
					t.Errorf("n %d mask %t: in place %v, not %v", n, m != nil, inPlace, got)
				}
			}
		}
	}
}

// withAVX2 runs f with the AVX2 kernels on or off (on only where the CPU
// has them).
func withAVX2(on bool, f func()) {
	saved := haveAVX2
	defer func() { haveAVX2 = saved }()
	haveAVX2 = on && saved
	f()
}

// checkSoftmax checks y against softmax(scale·x + mask) in float64.
func checkSoftmax(t *testing.T, n int, y, x, mask []float32, scale float32) {
	t.Helper()
	z := make([]float64, n)
	m := math.Inf(-1)
	for j, v := range x {
		z[j] = float64(scale * v)
		if mask != nil {
			z[j] += float64(mask[j])
		}
		m = math.Max(m, z[j])
	}
	var s float64
	for j := range z {
		z[j] = math.Exp(z[j] - m)
		s += z[j]
	}
	for j := range z {
		if w := z[j] / s; math.Abs(float64(y[j])-w) > 1e-6*w+1e-38 {
			t.Fatalf("n %d mask %t: y[%d] = %v, want %v", n, mask != nil, j, y[j], w)
		}
	}
}

func equal(a, b []float32) bool {
	for j := range a {
		if math.Float32bits(a[j]) != math.Float32bits(b[j]) {
			return false
		}
	}
	return len(a) == len(b)
}

// TestSoftmaxEdges checks rows masked entirely (zeros), rows with a NaN
// (NaNs) and rows with +Inf (NaNs, as e^(Inf - Inf)), with and without
// AVX2.
func TestSoftmaxEdges(t *testing.T) {
	ninf, inf, nan := float32(math.Inf(-1)), float32(math.Inf(1)), float32(math.NaN())
	for _, avx := range []bool{haveAVX2, false} {
		for _, n := range []int{1, 5, 8, 13, 32} {
			x, masked := make([]float32, n), make([]float32, n)
			for j := range masked {
				x[j], masked[j] = float32(j), ninf
			}
			y := make([]float32, n)
			for j := range y {
				y[j] = 7
			}
			withAVX2(avx, func() { Softmax(y, x, masked, 1) })
			for j, v := range y {
				if v != 0 {
					t.Fatalf("n %d avx2 %t: fully masked row: y[%d] = %v, want 0", n, avx, j, v)
				}
			}
			for _, bad := range []float32{nan, inf} {
				x[n-1] = bad
				withAVX2(avx, func() { Softmax(y, x, nil, 1) })
				for j, v := range y {
					if v == v {
						t.Fatalf("n %d avx2 %t: row with %v: y[%d] = %v, want NaN", n, avx, bad, j, v)
					}
				}
				x[n-1] = float32(n - 1)
			}
		}
	}
}

func BenchmarkSoftmax(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	x, mask, y := make([]float32, 32), make([]float32, 32), make([]float32, 32)
	for j := range x {
		x[j] = float32(rng.NormFloat64())
	}
	for b.Loop() {
		Softmax(y, x, mask, 0.125)
	}
}

func BenchmarkSoftmaxSteps(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	x, mask, y := make([]float32, 32), make([]float32, 32), make([]float32, 32)
	for j := range x {
		x[j] = float32(rng.NormFloat64())
	}
	for b.Loop() {
		for j, v := range x {
			y[j] = 0.125*v + mask[j]
		}
		m := Max(y)
		r := float32(1 / ExpShift(y, y, m))
		for j := range y {
			y[j] *= r
		}
	}
}
