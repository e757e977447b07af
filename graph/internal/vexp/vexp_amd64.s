#include "textflag.h"

// Constants of Cephes' expf: the range of arguments, log2(e), ln 2 in two
// parts (c1 exact in few bits, c2 the rest) and the polynomial for e^r - 1 - r
// on |r| ≤ ln(2)/2, over r².
DATA expc<>+0(SB)/4, $0xc2aeac4f  // lo: -87.33654, e^lo = 2^-126
DATA expc<>+4(SB)/4, $0x42b0c0a5  // hi: 88.37626
DATA expc<>+8(SB)/4, $0x3fb8aa3b  // log2(e)
DATA expc<>+12(SB)/4, $0x3f318000 // c1: 0.693359375
DATA expc<>+16(SB)/4, $0xb95e8083 // c2: -2.12194440e-4
DATA expc<>+20(SB)/4, $0x39506967 // p0: 1.9875691500e-4
DATA expc<>+24(SB)/4, $0x3ab743ce // p1: 1.3981999507e-3
DATA expc<>+28(SB)/4, $0x3c088908 // p2: 8.3334519073e-3
DATA expc<>+32(SB)/4, $0x3d2aa9c1 // p3: 4.1665795894e-2
DATA expc<>+36(SB)/4, $0x3e2aaaaa // p4: 1.6666665459e-1
DATA expc<>+40(SB)/4, $0x3f000000 // p5: 0.5
DATA expc<>+44(SB)/4, $0x3f800000 // 1
DATA expc<>+48(SB)/4, $127        // the exponent bias
GLOBL expc<>(SB), RODATA|NOPTR, $52

// func expShiftAVX2(dst, x *float32, n int, shift float32) float64
//
// For each 8 elements: t = x - shift, clamped to [lo, hi]; k = round(t·log2 e);
// r = t - k·ln 2; e^r = 1 + r + r²·p(r); e^t = e^r · 2^k, with 2^k built in
// the exponent bits; 0 where t < lo. The sum goes to two float64 accumulators.
TEXT ·expShiftAVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS shift+24(FP), Y15
	VBROADCASTSS expc<>+0(SB), Y14  // lo
	VBROADCASTSS expc<>+4(SB), Y13  // hi
	VBROADCASTSS expc<>+8(SB), Y12  // log2(e)
	VBROADCASTSS expc<>+12(SB), Y11 // c1
	VBROADCASTSS expc<>+16(SB), Y10 // c2
	VBROADCASTSS expc<>+44(SB), Y9  // 1
	VPBROADCASTD expc<>+48(SB), Y8  // 127
	VXORPD       Y6, Y6, Y6         // sums of the low and high four
	VXORPD       Y7, Y7, Y7

loop:
	VMOVUPS      (SI), Y0
	VSUBPS       Y15, Y0, Y0        // t
	VCMPPS       $0x1d, Y14, Y0, Y5 // t ≥ lo (false for NaN)
	VMINPS       Y13, Y0, Y0
	VMAXPS       Y14, Y0, Y0
	VMULPS       Y12, Y0, Y1
	VROUNDPS     $0, Y1, Y1         // k, to nearest
	VFNMADD231PS Y11, Y1, Y0        // r = t - k·c1
	VFNMADD231PS Y10, Y1, Y0        // r -= k·c2
	VBROADCASTSS expc<>+20(SB), Y2  // p(r) by Horner
	VBROADCASTSS expc<>+24(SB), Y3
	VFMADD213PS  Y3, Y0, Y2
	VBROADCASTSS expc<>+28(SB), Y3
	VFMADD213PS  Y3, Y0, Y2
	VBROADCASTSS expc<>+32(SB), Y3
	VFMADD213PS  Y3, Y0, Y2
	VBROADCASTSS expc<>+36(SB), Y3
	VFMADD213PS  Y3, Y0, Y2
	VBROADCASTSS expc<>+40(SB), Y3
	VFMADD213PS  Y3, Y0, Y2
	VMULPS       Y0, Y0, Y3         // r²
	VFMADD213PS  Y0, Y3, Y2         // r + r²·p(r)
	VADDPS       Y9, Y2, Y2         // e^r
	VCVTPS2DQ    Y1, Y4             // 2^k: (k + 127) << 23
	VPADDD       Y8, Y4, Y4
	VPSLLD       $23, Y4, Y4
	VMULPS       Y4, Y2, Y2
	VANDPS       Y5, Y2, Y2
	TESTQ        DI, DI
	JZ           sum
	VMOVUPS      Y2, (DI)
	ADDQ         $32, DI

sum:
	VCVTPS2PD     X2, Y0
	VEXTRACTF128  $1, Y2, X1
	VCVTPS2PD     X1, Y1
	VADDPD        Y0, Y6, Y6
	VADDPD        Y1, Y7, Y7
	ADDQ          $32, SI
	SUBQ          $8, CX
	JNZ           loop

	VADDPD       Y7, Y6, Y6
	VEXTRACTF128 $1, Y6, X7
	VADDPD       X7, X6, X6
	VHADDPD      X6, X6, X6
	VZEROUPPER
	MOVSD        X6, ret+32(FP)
	RET

// func maxAVX2(x *float32, n int) (m float32, nan bool)
//
// The largest of n elements, n a positive multiple of 8, and whether any is
// NaN (VMAXPS alone would drop a NaN).
TEXT ·maxAVX2(SB), NOSPLIT, $0-21
	MOVQ    x+0(FP), SI
	MOVQ    n+8(FP), CX
	VMOVUPS (SI), Y0
	VXORPS  Y2, Y2, Y2

maxloop:
	VMOVUPS (SI), Y1
	VCMPPS  $3, Y1, Y1, Y3 // unordered: NaN
	VORPS   Y3, Y2, Y2
	VMAXPS  Y1, Y0, Y0
	ADDQ    $32, SI
	SUBQ    $8, CX
	JNZ     maxloop

	VEXTRACTF128 $1, Y0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0x4e, X0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0xb1, X0, X1
	VMAXPS       X1, X0, X0
	VMOVSS       X0, m+16(FP)
	VPTEST       Y2, Y2
	SETNE        nan+20(FP)
	VZEROUPPER
	RET

// func addAVX2(dst, x *float32, n int, c float32)
//
// dst[i] = x[i] + c for n elements, n a positive multiple of 8.
TEXT ·addAVX2(SB), NOSPLIT, $0-28
	MOVQ         dst+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS c+24(FP), Y1

addloop:
	VADDPS  (SI), Y1, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $8, CX
	JNZ     addloop
	VZEROUPPER
	RET
