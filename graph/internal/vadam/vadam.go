// Package vadam holds Adam's update of a run of parameters: the moments in
// the parameters' type, the step itself in float64, eight float32 elements
// at a time with AVX2 where the CPU has it. The vector code rounds every
// operation as the portable code does, so the two agree bit for bit (every
// product is converted before it is added, so no compiler may fuse them).
package vadam

import "math"

// Step holds the constants of one update: θ ·= Keep, then with g = Scale·g,
//
//	m = β1·m + (1-β1)·g,   v = β2·v + (1-β2)·g·g
//	θ = θ - Step·m / (sqrt(v)·RC2 + Eps)
//
// where Step is lr/(1-β1^t) and RC2 is 1/sqrt(1-β2^t), Adam's bias
// corrections folded into two constants, and Keep is AdamW's 1-lr·λ (1 for
// Adam).
type Step struct {
	Beta1, Beta2, Scale, Keep float64
	Step, RC2, Eps            float64
}

// Update32 applies s to theta with gradient g and moments m and v, at
// least as long as theta.
func Update32(theta, g, m, v []float32, s Step) { update32(theta, g, m, v, s) }

// Update64 is Update32 for float64.
func Update64(theta, g, m, v []float64, s Step) { update(theta, g, m, v, s) }

// update32 is Update32's implementation: the vector one where the CPU has
// it (vadam_amd64.go).
var update32 = update[float32]

// update is Update in Go.
func update[T float32 | float64](theta, g, m, v []T, s Step) {
	b1, b2, scale, keep := T(s.Beta1), T(s.Beta2), T(s.Scale), T(s.Keep)
	c1, c2 := 1-b1, 1-b2
	g, m, v = g[:len(theta)], m[:len(theta)], v[:len(theta)]
	for i, gi := range g {
		gi *= scale
		m[i] = T(b1*m[i]) + T(c1*gi)
		v[i] = T(b2*v[i]) + T(T(c2*gi)*gi)
		d := float64(math.Sqrt(float64(v[i]))*s.RC2) + s.Eps
		theta[i] = T(theta[i]*keep) - T(s.Step*float64(m[i])/d)
	}
}
