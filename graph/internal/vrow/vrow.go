// Package vrow holds the row kernels behind the norms and the softmax
// backward over float32 rows: sums and dot products, and the maps that
// normalize a row and take its gradient, all in float64 arithmetic, eight
// or sixteen elements at a time with AVX2 where the CPU has it; and ReLU
// and its gradient, in float32 and (portable) float64.
//
// The sums keep sixteen partial sums, element i adding into partial
// i mod 16, and add the partials pairwise at the end. The vector code and
// the portable code follow that order, so they agree bit for bit; every
// product is rounded before it is added, so no compiler may fuse the two.
package vrow

import "math"

// lanes is the number of partial sums.
const lanes = 16

// partials holds the partial sums of one row.
type partials [lanes]float64

// total adds the partial sums pairwise: p[i] += p[i+8] for i < 8, then
// p[i] += p[i+4] for i < 4, and so on.
func (p *partials) total() float64 {
	a0, a1, a2, a3 := p[0]+p[8], p[1]+p[9], p[2]+p[10], p[3]+p[11]
	a4, a5, a6, a7 := p[4]+p[12], p[5]+p[13], p[6]+p[14], p[7]+p[15]
	a0, a1, a2, a3 = a0+a4, a1+a5, a2+a6, a3+a7
	return (a0 + a2) + (a1 + a3)
}

// body is how many of n elements the vector code takes (0 without AVX2): a
// multiple of m.
func body(n, m int) int {
	if !haveAVX2 {
		return 0
	}
	return n / m * m
}

// Sum is Σ x_i in float64.
func Sum(x []float32) float64 {
	var p partials
	i := body(len(x), lanes)
	if i > 0 {
		sumAVX2(&p, &x[0], i)
	}
	for ; i < len(x); i++ {
		p[i%lanes] += float64(x[i])
	}
	return p.total()
}

// Dot is Σ a_i·b_i, each product rounded to float32 and summed in float64;
// b is at least as long as a.
func Dot(a, b []float32) float64 {
	b = b[:len(a)]
	var p partials
	i := body(len(a), lanes)
	if i > 0 {
		dotAVX2(&p, &a[0], &b[0], i)
	}
	for ; i < len(a); i++ {
		p[i%lanes] += float64(a[i] * b[i])
	}
	return p.total()
}

// SquaresAbout is Σ (x_i - c)² in float64.
func SquaresAbout(x []float32, c float64) float64 {
	var p partials
	i := body(len(x), lanes)
	if i > 0 {
		squaresAVX2(&p, &x[0], i, c)
	}
	for ; i < len(x); i++ {
		d := float64(x[i]) - c
		p[i%lanes] += float64(d * d)
	}
	return p.total()
}

// DotAbout is Σ a_i·b_i·(x_i - c): each a_i·b_i rounded to float32, the
// rest in float64; b and x are at least as long as a.
func DotAbout(a, b, x []float32, c float64) float64 {
	b, x = b[:len(a)], x[:len(a)]
	var p partials
	i := body(len(a), lanes)
	if i > 0 {
		dotAboutAVX2(&p, &a[0], &b[0], &x[0], i, c)
	}
	for ; i < len(a); i++ {
		p[i%lanes] += float64(float64(a[i]*b[i]) * (float64(x[i]) - c))
	}
	return p.total()
}

// Normalize writes y_i = g_i·x̂_i + b_i with x̂_i = (x_i - mean)·rstd
// computed in float64 and rounded to float32, and the product rounded
// before b_i is added; a nil b adds nothing. y, g and b (unless nil) are as
// long as x, and y may be x, or b: Normalize(y, x, g, y, …) adds g·x̂ to y.
func Normalize(y, x, g, b []float32, mean, rstd float64) {
	y, g = y[:len(x)], g[:len(x)]
	i := body(len(x), 8)
	if i > 0 {
		var pb *float32
		if b != nil {
			pb = &b[:len(x)][0]
		}
		normalizeAVX2(&y[0], &x[0], &g[0], pb, i, mean, rstd)
	}
	for ; i < len(x); i++ {
		v := float32(g[i] * float32((float64(x[i])-mean)*rstd))
		if b != nil {
			v += b[i]
		}
		y[i] = v
	}
}

// NormalizeGrad writes the gradient of a normalized row's input,
// dx_i = rstd·(g_i·dy_i - md - x̂_i·mdx) with x̂_i = (x_i - mean)·rstd,
// g_i·dy_i rounded to float32 and the rest in float64. dx, g and dy are as
// long as x, and dx may be x.
func NormalizeGrad(dx, x, g, dy []float32, mean, rstd, md, mdx float64) {
	dx, g, dy = dx[:len(x)], g[:len(x)], dy[:len(x)]
	i := body(len(x), 8)
	if i > 0 {
		normalizeGradAVX2(&dx[0], &x[0], &g[0], &dy[0], i, mean, rstd, md, mdx)
	}
	for ; i < len(x); i++ {
		xh := (float64(x[i]) - mean) * rstd
		dx[i] = float32(rstd * (float64(g[i]*dy[i]) - md - float64(xh*mdx)))
	}
}

// Add writes y_i = a_i + b_i; a and b are at least as long as y, and may be
// y itself.
func Add(y, a, b []float32) {
	a, b = a[:len(y)], b[:len(y)]
	i := body(len(y), 8)
	if i > 0 {
		addAVX2(&y[0], &a[0], &b[0], i)
	}
	for ; i < len(y); i++ {
		y[i] = a[i] + b[i]
	}
}

// ReLU writes y_i = x_i where x_i's sign bit is clear, else 0: max(0, x_i),
// with -0 made +0; y is at least as long as x.
func ReLU(y, x []float32) {
	y = y[:len(x)]
	i := body(len(x), 8)
	if i > 0 {
		reluAVX2(&y[0], &x[0], i)
	}
	for ; i < len(x); i++ {
		b := math.Float32bits(x[i])
		y[i] = math.Float32frombits(b &^ uint32(int32(b)>>31)) // no branch: see ReLUGrad
	}
}

// ReLUGrad writes dx_i = dy_i where x_i > 0 (as an int32, its bits are
// positive: positive numbers and NaNs with the sign bit clear), else 0; dx
// and dy are at least as long as x. Like ReLU it selects with the sign bit
// rather than branch: a branch on the sign of random activations is
// mispredicted half the time.
func ReLUGrad(dx, x, dy []float32) {
	dx, dy = dx[:len(x)], dy[:len(x)]
	i := body(len(x), 8)
	if i > 0 {
		reluGradAVX2(&dx[0], &x[0], &dy[0], i)
	}
	for ; i < len(x); i++ {
		b := int32(math.Float32bits(x[i]))
		keep := uint32((^b & -b) >> 31) // all ones where b > 0, without a branch
		dx[i] = math.Float32frombits(math.Float32bits(dy[i]) & keep)
	}
}

// ReLU64 is ReLU for float64 rows, and ReLUGrad64 is ReLUGrad: they too
// select with the sign bit rather than branch (which made them ten times
// slower). signMask64(b) is all ones where the float of bits b is not
// negative, keep64(b) where it is positive (not ±0).
func ReLU64(y, x []float64) {
	y = y[:len(x)]
	for i, v := range x {
		b := math.Float64bits(v)
		y[i] = math.Float64frombits(b & signMask64(b))
	}
}

// ReLUGrad64 is ReLUGrad for float64 rows (see ReLU64).
func ReLUGrad64(dx, x, dy []float64) {
	dx, dy = dx[:len(x)], dy[:len(x)]
	for i, v := range x {
		dx[i] = math.Float64frombits(math.Float64bits(dy[i]) & keep64(math.Float64bits(v)))
	}
}

func signMask64(b uint64) uint64 { return uint64(int64(^b) >> 63) }
func keep64(b uint64) uint64     { return uint64((int64(^b) & -int64(b)) >> 63) }

// Scale writes y_i = s·x_i; y is at least as long as x, and may be x.
func Scale(y, x []float32, s float32) {
	y = y[:len(x)]
	i := body(len(x), 8)
	if i > 0 {
		scaleAVX2(&y[0], &x[0], i, s)
	}
	for ; i < len(x); i++ {
		y[i] = s * x[i]
	}
}

// ScaleMasked writes y_i = s·x_i where bit i mod 64 of mask[i/64] is set,
// else +0: the product's bits and'ed with the bit widened to a word, so
// that no branch waits on a random bit (dropout's mask). y is at least as
// long as x, and may be x; mask holds a word for every 64 elements of x.
func ScaleMasked(y, x []float32, mask []int, s float32) {
	y = y[:len(x)]
	i := body(len(x), 64)
	if i > 0 {
		scaleMaskedAVX2(&y[0], &x[0], &mask[:i/64][0], i/64, s)
	}
	for ; i < len(x); i++ {
		keep := -uint32(mask[i>>6] >> (i & 63) & 1)
		y[i] = math.Float32frombits(math.Float32bits(s*x[i]) & keep)
	}
}
