//go:build !amd64

package vexp

const haveAVX2 = false

func expShiftAVX2(dst, x *float32, n int, shift float32) float64 { panic("vexp: no AVX2") }
