package graph

import (
	"math"
	"testing"
)

func TestExp32(t *testing.T) {
	worst := 0.0
	for x := float32(-103); x < 88.5; x += 0.0137 {
		want := math.Exp(float64(x))
		got := float64(exp32(x))
		if want < math.SmallestNonzeroFloat32*1e10 {
			continue // denormals: absolute error only
		}
		worst = max(worst, math.Abs(got-want)/want)
	}
	if worst > 1e-7 {
		t.Fatalf("largest relative error %.2g", worst)
	}
	for _, tc := range []struct{ x, want float32 }{
		{0, 1}, {float32(math.Inf(-1)), 0}, {-200, 0}, {float32(math.Inf(1)), float32(math.Inf(1))},
	} {
		if got := exp32(tc.x); got != tc.want {
			t.Errorf("exp32(%v) = %v, want %v", tc.x, got, tc.want)
		}
	}
	if nan := exp32(float32(math.NaN())); nan == nan {
		t.Error("exp32(NaN) is not NaN")
	}
}

func BenchmarkExp32(b *testing.B) {
	x := float32(0.3)
	for range b.N {
		x = exp32(-x)
	}
	_ = x
}

func BenchmarkMathExp(b *testing.B) {
	x := 0.3
	for range b.N {
		x = math.Exp(-x)
	}
	_ = x
}
