package vexp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestExpShift compares every exponential and the sum with float64's
// math.Exp, over lengths with and without a tail of fewer than 8, with and
// without dst, and over the whole range of arguments a softmax sees.
func TestExpShift(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 7, 8, 9, 64, 1003} {
		for _, shift := range []float32{0, 3.5, -20} {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(rng.Float64()*120 - 100) // e^(x-shift) from 2^-174 to 2^29
			}
			x[0] = shift // e^0
			dst := make([]float32, n)
			sum := ExpShift(dst, x, shift)
			var want float64
			for i, v := range x {
				w := math.Exp(float64(v - shift))
				if w < 0x1p-126 {
					w = 0
				}
				want += float64(float32(w))
				if got := float64(dst[i]); math.Abs(got-w) > 2.5e-7*w {
					t.Fatalf("n %d shift %v: e^(%v - shift) = %v, want %v (relative error %.2g)", n, shift, v, got, w, (got-w)/w)
				}
			}
			if math.Abs(sum-want) > 1e-7*want {
				t.Errorf("n %d shift %v: sum %v, want %v", n, shift, sum, want)
			}
			if got := ExpShift(nil, x, shift); got != sum {
				t.Errorf("n %d shift %v: sum without dst %v, with dst %v", n, shift, got, sum)
			}
		}
	}
}

// TestExpShiftEdges covers arguments below the normal range (0), at the top of
// float32's range, and NaN (not a finite positive number).
func TestExpShiftEdges(t *testing.T) {
	x := []float32{-88, -1000, float32(math.Inf(-1)), 0, 88, -87, 1, 2, float32(math.NaN())}
	dst := make([]float32, len(x))
	ExpShift(dst, x, 0)
	for i, want := range []float64{0, 0, 0, 1, math.Exp(88), math.Exp(-87), math.E, math.Exp(2)} {
		if got := float64(dst[i]); math.Abs(got-want) > 2.5e-7*want {
			t.Errorf("e^%v = %v, want %v", x[i], got, want)
		}
	}
	if v := dst[8]; v > 0 && !math.IsInf(float64(v), 0) {
		t.Errorf("e^NaN = %v", v)
	}
}

func BenchmarkExpShift(b *testing.B) {
	for _, n := range []int{8000, 37000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			x, dst := make([]float32, n), make([]float32, n)
			for i := range x {
				x[i] = float32(i%100) / -10
			}
			b.SetBytes(int64(4 * n))
			for range b.N {
				ExpShift(dst, x, 0)
			}
		})
	}
}

// BenchmarkExp is the scalar Exp over 8000 elements, for comparison.
func BenchmarkExp(b *testing.B) {
	x, dst := make([]float32, 8000), make([]float32, 8000)
	for i := range x {
		x[i] = float32(i%100) / -10
	}
	b.SetBytes(int64(4 * len(x)))
	for range b.N {
		for i, v := range x {
			dst[i] = Exp(v)
		}
	}
}

// TestExp checks the scalar Exp against math.Exp over the normal range, and
// its edges.
func TestExp(t *testing.T) {
	worst := 0.0
	for x := float32(lo); x < 88.5; x += 0.0137 {
		want := math.Exp(float64(x))
		worst = max(worst, math.Abs(float64(Exp(x))-want)/want)
	}
	if worst > 1e-7 {
		t.Fatalf("largest relative error %.2g", worst)
	}
	for _, tc := range []struct{ x, want float32 }{
		{0, 1}, {float32(math.Inf(-1)), 0}, {-88, 0}, {-200, 0}, {float32(math.Inf(1)), float32(math.Inf(1))},
	} {
		if got := Exp(tc.x); got != tc.want {
			t.Errorf("Exp(%v) = %v, want %v", tc.x, got, tc.want)
		}
	}
	if nan := Exp(float32(math.NaN())); nan == nan {
		t.Error("Exp(NaN) is not NaN")
	}
}

func TestMaxAndAddConst(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 5, 8, 13, 64, 1001} {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.NormFloat64() * 10)
		}
		for _, at := range []int{0, n / 2, n - 1} {
			y := append([]float32(nil), x...)
			y[at] = 1000
			if got := Max(y); got != 1000 {
				t.Errorf("n %d, largest at %d: Max %v", n, at, got)
			}
			y[at] = float32(math.NaN())
			if got := Max(y); got == got {
				t.Errorf("n %d, NaN at %d: Max %v", n, at, got)
			}
		}
		dst := make([]float32, n)
		AddConst(dst, x, -2.5)
		for i := range x {
			if dst[i] != x[i]-2.5 {
				t.Fatalf("n %d: AddConst gives %v at %d, want %v", n, dst[i], i, x[i]-2.5)
			}
		}
	}
}

// TestExps covers the vector loop's range, the arguments above hi that it
// would clamp, infinities and NaN, over more than one block, into another
// slice and in place.
func TestExps(t *testing.T) {
	var x []float32
	for i := range 150 {
		x = append(x, float32(i)-75)
	}
	x = append(x, 40, 88.37, 88.5, 88.7, 89, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), -87, 10)
	dst := make([]float32, len(x))
	Exps(dst, x)
	in := append([]float32(nil), x...)
	Exps(in, in)
	for i, v := range x {
		if in[i] != dst[i] && !(in[i] != in[i] && dst[i] != dst[i]) {
			t.Errorf("e^%v in place = %v, into another slice %v", v, in[i], dst[i])
		}
		want := math.Exp(float64(v))
		got := float64(dst[i])
		switch {
		case v != v:
			if got == got {
				t.Errorf("e^NaN = %v", got)
			}
		case want > math.MaxFloat32:
			if !math.IsInf(got, 1) {
				t.Errorf("e^%v = %v, want +Inf", v, got)
			}
		case math.Abs(got-want) > 2.5e-7*want:
			t.Errorf("e^%v = %v, want %v", v, got, want)
		}
	}
}
