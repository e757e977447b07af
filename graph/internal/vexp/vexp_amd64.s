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

// EXP_CONSTANTS loads the constants EXP_SHIFT keeps in Y8-Y14.
#define EXP_CONSTANTS \
	VBROADCASTSS expc<>+0(SB), Y14  /* lo */ \
	VBROADCASTSS expc<>+4(SB), Y13  /* hi */ \
	VBROADCASTSS expc<>+8(SB), Y12  /* log2(e) */ \
	VBROADCASTSS expc<>+12(SB), Y11 /* c1 */ \
	VBROADCASTSS expc<>+16(SB), Y10 /* c2 */ \
	VBROADCASTSS expc<>+44(SB), Y9  /* 1 */ \
	VPBROADCASTD expc<>+48(SB), Y8  /* 127 */

// EXP_SHIFT sets Y2 = e^(Y0 - Y15) for eight elements: t = Y0 - Y15, clamped
// to [lo, hi]; k = round(t·log2 e); r = t - k·ln 2; e^r = 1 + r + r²·p(r);
// e^t = e^r · 2^k, with 2^k built in the exponent bits; 0 where t < lo or t
// is NaN. It overwrites Y0-Y5 and needs EXP_CONSTANTS in Y8-Y14.
#define EXP_SHIFT \
	VSUBPS       Y15, Y0, Y0        /* t */ \
	VCMPPS       $0x1d, Y14, Y0, Y5 /* t ≥ lo (false for NaN) */ \
	VMINPS       Y13, Y0, Y0 \
	VMAXPS       Y14, Y0, Y0 \
	VMULPS       Y12, Y0, Y1 \
	VROUNDPS     $0, Y1, Y1         /* k, to nearest */ \
	VFNMADD231PS Y11, Y1, Y0        /* r = t - k·c1 */ \
	VFNMADD231PS Y10, Y1, Y0        /* r -= k·c2 */ \
	VBROADCASTSS expc<>+20(SB), Y2  /* p(r) by Horner */ \
	VBROADCASTSS expc<>+24(SB), Y3 \
	VFMADD213PS  Y3, Y0, Y2 \
	VBROADCASTSS expc<>+28(SB), Y3 \
	VFMADD213PS  Y3, Y0, Y2 \
	VBROADCASTSS expc<>+32(SB), Y3 \
	VFMADD213PS  Y3, Y0, Y2 \
	VBROADCASTSS expc<>+36(SB), Y3 \
	VFMADD213PS  Y3, Y0, Y2 \
	VBROADCASTSS expc<>+40(SB), Y3 \
	VFMADD213PS  Y3, Y0, Y2 \
	VMULPS       Y0, Y0, Y3         /* r² */ \
	VFMADD213PS  Y0, Y3, Y2         /* r + r²·p(r) */ \
	VADDPS       Y9, Y2, Y2         /* e^r */ \
	VCVTPS2DQ    Y1, Y4             /* 2^k: (k + 127) << 23 */ \
	VPADDD       Y8, Y4, Y4 \
	VPSLLD       $23, Y4, Y4 \
	VMULPS       Y4, Y2, Y2 \
	VANDPS       Y5, Y2, Y2

// SUM_PD adds the eight float32 of Y2 to the float64 sums Y6 (low four) and
// Y7 (high four); it overwrites Y0 and Y1.
#define SUM_PD \
	VCVTPS2PD    X2, Y0 \
	VEXTRACTF128 $1, Y2, X1 \
	VCVTPS2PD    X1, Y1 \
	VADDPD       Y0, Y6, Y6 \
	VADDPD       Y1, Y7, Y7

// TOTAL_PD sets X6 to the sum of the four float64 in each of Y6 and Y7.
#define TOTAL_PD \
	VADDPD       Y7, Y6, Y6 \
	VEXTRACTF128 $1, Y6, X7 \
	VADDPD       X7, X6, X6 \
	VHADDPD      X6, X6, X6

// func expShiftAVX2(dst, x *float32, n int, shift float32) float64
//
// EXP_SHIFT for each 8 elements, the sum in two float64 accumulators.
TEXT ·expShiftAVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS shift+24(FP), Y15
	EXP_CONSTANTS
	VXORPD       Y6, Y6, Y6         // sums of the low and high four
	VXORPD       Y7, Y7, Y7

loop:
	VMOVUPS (SI), Y0
	EXP_SHIFT
	TESTQ        DI, DI
	JZ           sum
	VMOVUPS      Y2, (DI)
	ADDQ         $32, DI

sum:
	SUM_PD
	ADDQ          $32, SI
	SUBQ          $8, CX
	JNZ           loop

	TOTAL_PD
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

// The lane masks of a row's last, partial vector: the eight int32 at
// tail<>+4·(8-r) have their first r lanes set, for r from 1 to 7.
DATA tail<>+0(SB)/4, $-1
DATA tail<>+4(SB)/4, $-1
DATA tail<>+8(SB)/4, $-1
DATA tail<>+12(SB)/4, $-1
DATA tail<>+16(SB)/4, $-1
DATA tail<>+20(SB)/4, $-1
DATA tail<>+24(SB)/4, $-1
DATA tail<>+28(SB)/4, $-1
DATA tail<>+32(SB)/4, $0
DATA tail<>+36(SB)/4, $0
DATA tail<>+40(SB)/4, $0
DATA tail<>+44(SB)/4, $0
DATA tail<>+48(SB)/4, $0
DATA tail<>+52(SB)/4, $0
DATA tail<>+56(SB)/4, $0
DATA tail<>+60(SB)/4, $0
GLOBL tail<>(SB), RODATA|NOPTR, $64

DATA ninf<>+0(SB)/4, $0xff800000 // -Inf
GLOBL ninf<>(SB), RODATA|NOPTR, $4

// STORE_TAIL writes the first R11 (1 to 7) elements of Y0 to DI+BX, in
// blocks of four, two and one; it overwrites DI, R11 and Y0. The labels
// are its own for each use.
#define STORE_TAIL(quarter, single, done) \
	LEAQ         (DI)(BX*1), DI \
	CMPQ         R11, $4 \
	JLT          quarter \
	VMOVUPS      X0, (DI) \
	VEXTRACTF128 $1, Y0, X0 \
	ADDQ         $16, DI \
	SUBQ         $4, R11 \
quarter: \
	CMPQ    R11, $2 \
	JLT     single \
	VMOVQ   X0, (DI) \
	VPSRLDQ $8, X0, X0 \
	ADDQ    $8, DI \
	SUBQ    $2, R11 \
single: \
	TESTQ  R11, R11 \
	JZ     done \
	VMOVSS X0, (DI)

// func softmaxAVX2(y, x, mask *float32, n int, scale float32) bool
//
// Three passes over the row of n ≥ 1 elements, eight at a time: y = scale·x
// + mask (no mask when it is nil) and its maximum m; y = e^(y - m) and their
// sum s in float64; y = y · float32(1/s). It returns false after the first
// pass when m is -Inf or some element is NaN. The last r = n mod 8 elements
// are read through the lane mask at R9 (a masked load reads nothing past
// the row) and kept in the local vector t between the passes; only the last
// pass writes them to y, one store per lane or block of lanes, as AMD's
// masked stores are slow.
TEXT ·softmaxAVX2(SB), NOSPLIT, $32-41
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ mask+16(FP), DX
	MOVQ n+24(FP), CX
	MOVQ CX, R10
	SHRQ $3, R10              // whole vectors
	MOVQ CX, R11
	ANDQ $7, R11              // r
	MOVQ $8, AX
	SUBQ R11, AX
	LEAQ tail<>(SB), R9
	LEAQ (R9)(AX*4), R9
	VBROADCASTSS scale+32(FP), Y15
	VBROADCASTSS ninf<>(SB), Y13 // the maxima
	VXORPS       Y12, Y12, Y12   // the NaNs

	XORQ  BX, BX
	MOVQ  R10, R8
	TESTQ R8, R8
	JZ    scaletail

scaleloop:
	VMULPS (SI)(BX*1), Y15, Y0
	TESTQ  DX, DX
	JZ     scaled
	VADDPS (DX)(BX*1), Y0, Y0

scaled:
	VMOVUPS Y0, (DI)(BX*1)
	VCMPPS  $3, Y0, Y0, Y1
	VORPS   Y1, Y12, Y12
	VMAXPS  Y0, Y13, Y13
	ADDQ    $32, BX
	DECQ    R8
	JNZ     scaleloop

scaletail:
	TESTQ      R11, R11
	JZ         maxima
	VMOVDQU    (R9), Y14
	VMASKMOVPS (SI)(BX*1), Y14, Y0
	VMULPS     Y15, Y0, Y0
	TESTQ      DX, DX
	JZ         scaledtail
	VMASKMOVPS (DX)(BX*1), Y14, Y1
	VADDPS     Y1, Y0, Y0

scaledtail:
	VMOVUPS   Y0, t-32(SP)
	VCMPPS    $3, Y0, Y0, Y1
	VANDPS    Y14, Y1, Y1
	VORPS     Y1, Y12, Y12
	VBLENDVPS Y14, Y0, Y13, Y1 // the lanes past the row keep the maxima
	VMAXPS    Y1, Y13, Y13

maxima:
	VEXTRACTF128 $1, Y13, X1
	VMAXPS       X1, X13, X13
	VPERMILPS    $0x4e, X13, X1
	VMAXPS       X1, X13, X13
	VPERMILPS    $0xb1, X13, X1
	VMAXPS       X1, X13, X13
	VPTEST       Y12, Y12
	JNE          special
	VUCOMISS     ninf<>(SB), X13
	JEQ          special
	VBROADCASTSS X13, Y15

	EXP_CONSTANTS
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	XORQ   BX, BX
	MOVQ   R10, R8
	TESTQ  R8, R8
	JZ     exptail

exploop:
	VMOVUPS (DI)(BX*1), Y0
	EXP_SHIFT
	VMOVUPS Y2, (DI)(BX*1)
	SUM_PD
	ADDQ    $32, BX
	DECQ    R8
	JNZ     exploop

exptail:
	TESTQ   R11, R11
	JZ      total
	VMOVUPS t-32(SP), Y0
	EXP_SHIFT
	VANDPS  (R9), Y2, Y2
	VMOVUPS Y2, t-32(SP)
	SUM_PD

total:
	TOTAL_PD
	MOVQ         $0x3ff0000000000000, AX // 1.0
	VMOVQ        AX, X0                  // not SSE's MOVQ: after AVX code it cost 120 ns a row here
	VDIVSD       X6, X0, X0
	VCVTSD2SS    X0, X0, X0
	VBROADCASTSS X0, Y15
	XORQ         BX, BX
	MOVQ         R10, R8
	TESTQ        R8, R8
	JZ           normtail

normloop:
	VMULPS  (DI)(BX*1), Y15, Y0
	VMOVUPS Y0, (DI)(BX*1)
	ADDQ    $32, BX
	DECQ    R8
	JNZ     normloop

normtail:
	TESTQ  R11, R11
	JZ     done
	VMULPS t-32(SP), Y15, Y0
	STORE_TAIL(quarter, single, done)

done:
	VZEROUPPER
	MOVB $1, ret+40(FP)
	RET

special:
	TESTQ   R11, R11
	JZ      unfinished
	VMOVUPS t-32(SP), Y0 // the scaled tail, which Go finishes with the rest
	STORE_TAIL(squarter, ssingle, unfinished)

unfinished:
	VZEROUPPER
	MOVB $0, ret+40(FP)
	RET
