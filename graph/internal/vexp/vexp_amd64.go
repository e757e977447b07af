package vexp

import "golang.org/x/sys/cpu"

var haveAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// expShiftAVX2 is ExpShift over n elements, n a positive multiple of 8; a nil
// dst stores nothing.
//
//go:noescape
func expShiftAVX2(dst, x *float32, n int, shift float32) float64
