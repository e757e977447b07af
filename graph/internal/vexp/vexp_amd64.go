package vexp

import "golang.org/x/sys/cpu"

var haveAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// expShiftAVX2 is ExpShift over n elements, n a positive multiple of 8; a nil
// dst stores nothing.
//
//go:noescape
func expShiftAVX2(dst, x *float32, n int, shift float32) float64

// maxAVX2 is the largest of n elements, n a positive multiple of 8, and
// whether any is NaN.
//
//go:noescape
func maxAVX2(x *float32, n int) (m float32, nan bool)

// addAVX2 sets dst[i] = x[i] + c for n elements, n a positive multiple of 8.
//
//go:noescape
func addAVX2(dst, x *float32, n int, c float32)

// softmaxAVX2 is Softmax over a row of n ≥ 1 elements (mask nil: none),
// except that it returns false, with y = scale·x + mask, when that row's
// maximum is -Inf or some element is NaN.
//
//go:noescape
func softmaxAVX2(y, x, mask *float32, n int, scale float32) bool

// haveAVX512 is whether SoftmaxRows may take rows four at a time with
// softmax4AVX512.
var haveAVX512 = cpu.X86.HasAVX512F

// softmax4AVX512 is softmaxAVX2 over four rows of n elements (1 ≤ n ≤ 32)
// at once, n apart at x and y, the mask of row r at mask + r·ldm elements;
// it returns false, having stored nothing, when some row's maximum is -Inf
// or some element NaN.
//
//go:noescape
func softmax4AVX512(y, x, mask *float32, n, ldm int, scale float32) bool
