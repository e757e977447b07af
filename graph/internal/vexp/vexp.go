// Package vexp holds the row kernels behind softmax and cross-entropy over
// float32 rows: a whole softmax, the row's maximum, e^(x_i - shift) for a
// whole row and their sum, and adding a constant, eight at a time with AVX2
// and FMA where the CPU has them.
package vexp

import (
	"math"
	"math/bits"
)

// lo is the least argument whose exponential is a normal float32 (2^-126).
const lo = -87.33654

// ExpShift writes e^(x[i] - shift) into dst[i] when dst is not nil (dst must
// then be as long as x) and returns Σ_i e^(x[i] - shift), summed in float64.
// The relative error of each exponential is within 2 units of float32's last
// place; arguments below -87.34 give 0.
func ExpShift(dst, x []float32, shift float32) float64 {
	n := 0
	var sum float64
	if haveAVX2 {
		n = len(x) &^ 7
		if n > 0 {
			var d *float32
			if dst != nil {
				d = &dst[0]
			}
			sum = expShiftAVX2(d, &x[0], n, shift)
		}
	}
	for i := n; i < len(x); i++ {
		e := Exp(x[i] - shift)
		if dst != nil {
			dst[i] = e
		}
		sum += float64(e)
	}
	return sum
}

// Softmax sets y to the softmax of scale·x + mask (no mask when it is nil):
//
//	z = scale·x + mask,  y_j = e^(z_j - m) / Σ_k e^(z_k - m),  m = max_k z_k
//
// with ExpShift's exponentials, their sum in float64 and the division as a
// product by float32(1/sum). A row whose every z_j is -Inf gives zeros, one
// with a NaN gives NaNs. y and mask must be as long as x; y may be x. With
// AVX2 it is one pass over the row for each line above, the last elements
// through lane masks rather than one at a time.
func Softmax(y, x, mask []float32, scale float32) {
	if len(x) == 0 {
		return
	}
	y = y[:len(x)]
	if mask != nil {
		mask = mask[:len(x)]
	}
	if haveAVX2 {
		var m *float32
		if mask != nil {
			m = &mask[0]
		}
		if softmaxAVX2(&y[0], &x[0], m, len(x), scale) {
			return
		}
	} else {
		for j, v := range x {
			y[j] = scale * v
			if mask != nil {
				y[j] += mask[j]
			}
		}
	}
	normalize(y)
}

// SoftmaxRows is Softmax over each row of n elements of x, written to the
// same row of y (which may be x): row r's mask is mask[r·maskStride:][:n],
// maskStride 0 giving every row the same one, and a nil mask none. Rows of
// up to 32 elements go four at a time through an AVX-512 kernel where the
// CPU has one, with Softmax's results bit for bit: one row at a time,
// short rows spend most of their time waiting on their own steps.
func SoftmaxRows(y, x, mask []float32, n, maskStride int, scale float32) {
	if n <= 0 {
		return
	}
	rows, r := len(x)/n, 0
	if haveAVX512 && haveAVX2 && n <= 32 {
		var zeros [32]float32
		m, ld := mask, maskStride
		if m == nil {
			m, ld = zeros[:], 0
		}
		for ; r+4 <= rows; r += 4 {
			_, _, _ = x[(r+4)*n-1], y[(r+4)*n-1], m[(r+3)*ld+n-1] // bounds for softmax4AVX512
			if !softmax4AVX512(&y[r*n], &x[r*n], &m[r*ld], n, ld, scale) {
				softmaxEach(y, x, mask, n, maskStride, scale, r, r+4) // a row Softmax finishes in Go
			}
		}
	}
	softmaxEach(y, x, mask, n, maskStride, scale, r, rows)
}

// softmaxEach is SoftmaxRows one row at a time, rows r0 to r1.
func softmaxEach(y, x, mask []float32, n, maskStride int, scale float32, r0, r1 int) {
	for r := r0; r < r1; r++ {
		var mr []float32
		if mask != nil {
			mr = mask[r*maskStride:][:n]
		}
		Softmax(y[r*n:(r+1)*n], x[r*n:(r+1)*n], mr, scale)
	}
}

// normalize replaces the row z by its softmax.
func normalize(z []float32) {
	m := Max(z)
	switch {
	case m != m:
		for j := range z {
			z[j] = m
		}
	case math.IsInf(float64(m), -1):
		clear(z)
	default:
		r := float32(1 / ExpShift(z, z, m))
		for j := range z {
			z[j] *= r
		}
	}
}

// hi is the greatest argument ExpShift's vector loop takes as it is; it
// clamps larger ones to it.
const hi = 88.37626

// Exps writes e^x[i] into dst[i] (dst as long as x, or x itself):
// ExpShift's exponentials with shift 0, except that arguments above hi,
// which ExpShift clamps, and NaNs are Exp's (+Inf above 88.72, NaN for NaN).
// It works in blocks of 64, setting those arguments aside before the block
// is overwritten.
func Exps(dst, x []float32) {
	const block = 64
	var aside [block]float32
	for s := 0; s < len(x); s += block {
		e := min(s+block, len(x))
		var special uint64
		for i, v := range x[s:e] {
			if !(v <= hi) {
				special |= 1 << i
				aside[i] = v
			}
		}
		ExpShift(dst[s:e], x[s:e], 0)
		for ; special != 0; special &= special - 1 {
			i := bits.TrailingZeros64(special)
			dst[s+i] = Exp(aside[i])
		}
	}
}

// Max is the largest element of x (not empty), NaN if any element is NaN.
func Max(x []float32) float32 {
	m, n := x[0], 0
	if haveAVX2 && len(x) >= 8 {
		n = len(x) &^ 7
		var nan bool
		if m, nan = maxAVX2(&x[0], n); nan {
			return float32(math.NaN())
		}
	}
	for _, v := range x[n:] {
		if v != v {
			return v
		}
		if v > m {
			m = v
		}
	}
	return m
}

// AddConst sets dst[i] = x[i] + c; dst must be as long as x.
func AddConst(dst, x []float32, c float32) {
	n := 0
	if haveAVX2 {
		n = len(x) &^ 7
		if n > 0 {
			addAVX2(&dst[0], &x[0], n, c)
		}
	}
	for i := n; i < len(x); i++ {
		dst[i] = x[i] + c
	}
}

// Exp is e^x: 2^n · 2^f with x·log2(e) = n + f, n an integer and f in
// [-0.5, 0.5], and 2^f from its degree-7 Taylor polynomial in f·ln 2,
// evaluated in float64 (relative error below 1e-7). Like ExpShift, it gives
// 0 below lo rather than a subnormal number.
func Exp(x float32) float32 {
	switch {
	case x > 88.7:
		return float32(math.Inf(1))
	case x < lo:
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
