package graph

import (
	"math"

	"github.com/transformer-go/transformer/graph/internal/vexp"
	"github.com/transformer-go/transformer/graph/internal/vrow"
)

// ExpShift writes e^(x_i - shift) into dst (unless dst is nil) and returns
// Σ_i e^(x_i - shift): the inner loop of softmax and cross-entropy over a
// row, eight at a time for float32 (vexp.ExpShift). Like RowMax, RowSum and
// AddRow, it is public for the kernels of ops defined in other packages.
func ExpShift[T Float](dst, x []T, shift T) float64 {
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

// RowMax is the largest element of x (not empty), NaN if any is NaN.
func RowMax[T Float](x []T) T {
	if x32, ok := any(x).([]float32); ok {
		return T(vexp.Max(x32))
	}
	m := x[0]
	for _, v := range x {
		m = max(m, v)
	}
	return m
}

// RowSum is Σ x in float64: float32 rows with vrow's vector kernels, others
// in four interleaved partial sums so that the additions do not wait on one
// another.
func RowSum[T Float](x []T) float64 {
	if x32, ok := any(x).([]float32); ok {
		return vrow.Sum(x32)
	}
	var s0, s1, s2, s3 float64
	n := len(x) &^ 3
	for j := 0; j < n; j += 4 {
		s0 += float64(x[j])
		s1 += float64(x[j+1])
		s2 += float64(x[j+2])
		s3 += float64(x[j+3])
	}
	for _, v := range x[n:] {
		s0 += float64(v)
	}
	return (s0 + s1) + (s2 + s3)
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
