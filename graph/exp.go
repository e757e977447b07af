package graph

import (
	"math"

	"github.com/transformer-go/transformer/graph/internal/vexp"
)

// expShift writes e^(x_i - shift) into dst (unless dst is nil) and returns
// Σ_i e^(x_i - shift): the inner loop of softmax and cross-entropy over a
// row, eight at a time for float32 (vexp.ExpShift).
func expShift[T Float](dst, x []T, shift T) float64 {
	if x32, ok := any(x).([]float32); ok {
		d32, _ := any(dst).([]float32)
		return vexp.ExpShift(d32, x32, float32(shift))
	}
	var sum float64
	for i, v := range x {
		e := T(math.Exp(float64(v - shift)))
		if dst != nil {
			dst[i] = e
		}
		sum += float64(e)
	}
	return sum
}

// rowMax is the largest element of x (not empty), NaN if any is NaN.
func rowMax[T Float](x []T) T {
	if x32, ok := any(x).([]float32); ok {
		return T(vexp.Max(x32))
	}
	m := x[0]
	for _, v := range x {
		m = max(m, v)
	}
	return m
}

// addConst sets dst[i] = x[i] + c.
func addConst[T Float](dst, x []T, c T) {
	if x32, ok := any(x).([]float32); ok {
		vexp.AddConst(any(dst).([]float32), x32, float32(c))
		return
	}
	for i, v := range x {
		dst[i] = v + c
	}
}
