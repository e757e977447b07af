//go:build !amd64

package vexp

// haveAVX2 is false off amd64: a variable, as on amd64, since the tests set it.
var haveAVX2 = false

func expShiftAVX2(dst, x *float32, n int, shift float32) float64 { panic("vexp: no AVX2") }

func maxAVX2(x *float32, n int) (float32, bool) { panic("vexp: no AVX2") }

func addAVX2(dst, x *float32, n int, c float32) { panic("vexp: no AVX2") }

func softmaxAVX2(y, x, mask *float32, n int, scale float32) bool { panic("vexp: no AVX2") }

const haveAVX512 = false

func softmax4AVX512(y, x, mask *float32, n, ldm int, scale float32) bool {
	panic("vexp: no AVX-512")
}
