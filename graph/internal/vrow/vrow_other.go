//go:build !amd64

package vrow

const haveAVX2 = false

func sumAVX2(p *partials, x *float32, n int) { panic("vrow: no AVX2") }

func dotAVX2(p *partials, a, b *float32, n int) { panic("vrow: no AVX2") }

func squaresAVX2(p *partials, x *float32, n int, c float64) { panic("vrow: no AVX2") }

func dotAboutAVX2(p *partials, a, b, x *float32, n int, c float64) { panic("vrow: no AVX2") }

func normalizeAVX2(y, x, gain, b *float32, n int, mean, rstd float64) { panic("vrow: no AVX2") }

func normalizeGradAVX2(dx, x, gain, dy *float32, n int, mean, rstd, md, mdx float64) {
	panic("vrow: no AVX2")
}

func addAVX2(y, a, b *float32, n int) { panic("vrow: no AVX2") }

func reluAVX2(y, x *float32, n int) { panic("vrow: no AVX2") }

func reluGradAVX2(dx, x, dy *float32, n int) { panic("vrow: no AVX2") }

func scaleAVX2(y, x *float32, n int, s float32) { panic("vrow: no AVX2") }

func scaleMaskedAVX2(y, x *float32, mask *int, words int, s float32) { panic("vrow: no AVX2") }
