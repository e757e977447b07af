package vrow

import "golang.org/x/sys/cpu"

var haveAVX2 = cpu.X86.HasAVX2

// The vector kernels take n elements (gain is the norm's g), n a positive multiple of 16 for the
// sums (which store their sixteen partial sums into p) and of 8 for the
// maps.

//go:noescape
func sumAVX2(p *partials, x *float32, n int)

//go:noescape
func dotAVX2(p *partials, a, b *float32, n int)

//go:noescape
func squaresAVX2(p *partials, x *float32, n int, c float64)

//go:noescape
func dotAboutAVX2(p *partials, a, b, x *float32, n int, c float64)

// normalizeAVX2 adds no bias when b is nil.
//
//go:noescape
func normalizeAVX2(y, x, gain, b *float32, n int, mean, rstd float64)

//go:noescape
func normalizeGradAVX2(dx, x, gain, dy *float32, n int, mean, rstd, md, mdx float64)

//go:noescape
func addAVX2(y, a, b *float32, n int)

//go:noescape
func reluAVX2(y, x *float32, n int)

//go:noescape
func reluGradAVX2(dx, x, dy *float32, n int)

//go:noescape
func scaleAVX2(y, x *float32, n int, s float32)

//go:noescape
func scaleMaskedAVX2(y, x *float32, mask *int, words int, s float32)
