package vadam

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

var haveAVX2 = cpu.X86.HasAVX2

func init() {
	if haveAVX2 {
		update32 = updateVector
	}
}

// consts are Step's constants as update32AVX2 reads them.
type consts struct {
	beta1, c1, beta2, c2, scale, keep float32
	_                                 [2]float32
	step, rc2, eps                    float64
}

// updateVector is update for float32 with update32AVX2 for all but the last
// len(theta) mod 8 elements.
func updateVector(theta, g, m, v []float32, s Step) {
	n := len(theta) &^ 7
	if n > 0 {
		_, _, _ = g[n-1], m[n-1], v[n-1]
		b1, b2 := float32(s.Beta1), float32(s.Beta2)
		c := consts{beta1: b1, c1: 1 - b1, beta2: b2, c2: 1 - b2, scale: float32(s.Scale), keep: float32(s.Keep),
			step: s.Step, rc2: s.RC2, eps: s.Eps}
		update32AVX2(&c, unsafe.SliceData(theta), unsafe.SliceData(g), unsafe.SliceData(m), unsafe.SliceData(v), n)
	}
	update(theta[n:], g[n:len(theta)], m[n:len(theta)], v[n:len(theta)], s)
}

// update32AVX2 is update of n float32 elements, n a multiple of 8. It
// needs AVX2.
//
//go:noescape
func update32AVX2(c *consts, theta, grad, m, v *float32, n int)
