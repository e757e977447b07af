#include "textflag.h"

// The softmax of four rows of up to 32 elements at once (AVX-512F), each
// row in two ZMM registers. softmaxAVX2 takes a short row through its
// dependent steps (maximum, exponentials, sum, division) one row at a
// time, and mostly waits on them; here the four rows take each step
// together. Each lane gets softmaxAVX2's arithmetic (EXP_SHIFT's steps, the
// float64 sums in its order, the product by float32(1/sum)), so the
// results are the same bit for bit.

// EXP_SHIFT's constants (expc<> in vexp_amd64.s) and -Inf. They are this
// file's own: a symbol of the package would be read through the GOT in the
// plugins that the notebooks' kernel builds, and the kernel gave NaNs there.
DATA sfc<>+0(SB)/4, $0xc2aeac4f  // lo
DATA sfc<>+4(SB)/4, $0x42b0c0a5  // hi
DATA sfc<>+8(SB)/4, $0x3fb8aa3b  // log2(e)
DATA sfc<>+12(SB)/4, $0x3f318000 // c1
DATA sfc<>+16(SB)/4, $0xb95e8083 // c2
DATA sfc<>+20(SB)/4, $0x39506967 // p0
DATA sfc<>+24(SB)/4, $0x3ab743ce // p1
DATA sfc<>+28(SB)/4, $0x3c088908 // p2
DATA sfc<>+32(SB)/4, $0x3d2aa9c1 // p3
DATA sfc<>+36(SB)/4, $0x3e2aaaaa // p4
DATA sfc<>+40(SB)/4, $0x3f000000 // p5
DATA sfc<>+44(SB)/4, $0x3f800000 // 1
DATA sfc<>+48(SB)/4, $127        // the exponent bias
DATA sfc<>+52(SB)/4, $0xff800000 // -Inf
GLOBL sfc<>(SB), RODATA|NOPTR, $56

// LOAD_ROW sets lo and hi to z = scale·x + mask of the row at (xr), mask
// at (mr), -Inf in the lanes past n (not in K1, K2), and jumps to special
// when z holds a NaN.
#define LOAD_ROW(xr, mr, lo, hi) \
	VMOVUPS.Z (xr), K1, lo; \
	VMOVUPS.Z 64(xr), K2, hi; \
	VMOVUPS.Z (mr), K1, Z12; \
	VMOVUPS.Z 64(mr), K2, Z13; \
	VMULPS    Z31, lo, lo; \
	VMULPS    Z31, hi, hi; \
	VADDPS    Z12, lo, lo; \
	VADDPS    Z13, hi, hi; \
	VCMPPS    $3, lo, lo, K3; \
	VCMPPS    $3, hi, hi, K4; \
	KORTESTW  K3, K4; \
	JNE       special; \
	VBLENDMPS lo, Z30, K1, lo; \
	VBLENDMPS hi, Z30, K2, hi

// MAX_ROW sets every lane of m to the row's maximum, jumping to special
// when it is -Inf; t is scratch.
#define MAX_ROW(lo, hi, m, t) \
	VMAXPS     lo, hi, m; \
	VSHUFF32X4 $0x4e, m, m, t; \
	VMAXPS     t, m, m; \
	VSHUFF32X4 $0xb1, m, m, t; \
	VMAXPS     t, m, m; \
	VPERMILPS  $0x4e, m, t; \
	VMAXPS     t, m, m; \
	VPERMILPS  $0xb1, m, t; \
	VMAXPS     t, m, m; \
	VCMPPS     $0, Z30, m, K3; \
	KORTESTW   K3, K3; \
	JNE        special

// EXP sets z to e^(z - m), as EXP_SHIFT does (vexp_amd64.s); it overwrites
// Z12-Z14 and K3.
#define EXP(z, m) \
	VSUBPS           m, z, z; \
	VCMPPS           $0x1d, Z29, z, K3; \
	VMINPS           Z28, z, z; \
	VMAXPS           Z29, z, z; \
	VMULPS           Z27, z, Z12; \
	VRNDSCALEPS      $0, Z12, Z12; \
	VFNMADD231PS     Z26, Z12, z; \
	VFNMADD231PS     Z25, Z12, z; \
	VBROADCASTSS     sfc<>+20(SB), Z13; \
	VFMADD213PS.BCST sfc<>+24(SB), z, Z13; \
	VFMADD213PS.BCST sfc<>+28(SB), z, Z13; \
	VFMADD213PS.BCST sfc<>+32(SB), z, Z13; \
	VFMADD213PS.BCST sfc<>+36(SB), z, Z13; \
	VFMADD213PS.BCST sfc<>+40(SB), z, Z13; \
	VMULPS           z, z, Z14; \
	VFMADD213PS      z, Z14, Z13; \
	VADDPS           Z24, Z13, Z13; \
	VCVTPS2DQ        Z12, Z14; \
	VPADDD           Z23, Z14, Z14; \
	VPSLLD           $23, Z14, Z14; \
	VMULPS.Z         Z14, Z13, K3, z

// SUM_ROW sets acc to the row's eight float64 sums: of its 8-element
// chunks' low four (lanes 0-3) and high four (4-7), as SUM_PD adds them,
// chunk by chunk; t is scratch.
#define SUM_ROW(lo, ylo, hi, yhi, acc, t, yt) \
	VCVTPS2PD  ylo, acc; \
	VSHUFF32X4 $0x0e, lo, lo, t; \
	VCVTPS2PD  yt, t; \
	VADDPD     t, acc, acc; \
	VCVTPS2PD  yhi, t; \
	VADDPD     t, acc, acc; \
	VSHUFF32X4 $0x0e, hi, hi, t; \
	VCVTPS2PD  yt, t; \
	VADDPD     t, acc, acc

// NORM_ROW multiplies the row by float32(1/Σ), Σ its sums in acc added as
// TOTAL_PD adds them, and stores it at (yr) under K1 and K2. X15 holds
// 1.0; it overwrites acc and Z12-Z13.
#define NORM_ROW(lo, hi, acc, yacc, xacc, yr) \
	VEXTRACTF64X4 $1, acc, Y12; \
	VADDPD        Y12, yacc, yacc; \
	VEXTRACTF128  $1, yacc, X13; \
	VADDPD        X13, xacc, xacc; \
	VHADDPD       xacc, xacc, xacc; \
	VDIVSD        xacc, X15, X12; \
	VCVTSD2SS     X12, X12, X12; \
	VBROADCASTSS  X12, Z12; \
	VMULPS        Z12, lo, lo; \
	VMULPS        Z12, hi, hi; \
	VMOVUPS       lo, K1, (yr); \
	VMOVUPS       hi, K2, 64(yr)

// func softmax4AVX512(y, x, mask *float32, n, ldm int, scale float32) bool
//
// Softmax of the four rows of n elements (1 ≤ n ≤ 32) at x, n apart, into
// those at y, row r's mask at mask + r·ldm. It returns false, having stored
// nothing, when some row holds a NaN or has the maximum -Inf.
TEXT ·softmax4AVX512(SB), NOSPLIT, $0-49
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ mask+16(FP), DX
	MOVQ n+24(FP), CX
	MOVQ ldm+32(FP), R8
	SHLQ $2, R8             // the masks' step in bytes
	MOVQ CX, R9
	SHLQ $2, R9             // the rows' step in bytes
	MOVQ $1, AX
	SHLQ CX, AX
	DECQ AX                 // n low bits: K1 the first 16, K2 the rest
	KMOVW AX, K1
	SHRQ $16, AX
	KMOVW AX, K2
	LEAQ (SI)(R9*1), AX     // the rows of x
	LEAQ (SI)(R9*2), BX
	LEAQ (BX)(R9*1), R10
	LEAQ (DX)(R8*1), R11    // of the mask
	LEAQ (DX)(R8*2), R12
	LEAQ (R12)(R8*1), R13
	VBROADCASTSS scale+40(FP), Z31
	VBROADCASTSS sfc<>+52(SB), Z30
	LOAD_ROW(SI, DX, Z0, Z1)
	LOAD_ROW(AX, R11, Z2, Z3)
	LOAD_ROW(BX, R12, Z4, Z5)
	LOAD_ROW(R10, R13, Z6, Z7)
	MAX_ROW(Z0, Z1, Z8, Z12)
	MAX_ROW(Z2, Z3, Z9, Z13)
	MAX_ROW(Z4, Z5, Z10, Z14)
	MAX_ROW(Z6, Z7, Z11, Z15)

	VBROADCASTSS sfc<>+0(SB), Z29
	VBROADCASTSS sfc<>+4(SB), Z28
	VBROADCASTSS sfc<>+8(SB), Z27
	VBROADCASTSS sfc<>+12(SB), Z26
	VBROADCASTSS sfc<>+16(SB), Z25
	VBROADCASTSS sfc<>+44(SB), Z24
	VPBROADCASTD sfc<>+48(SB), Z23
	EXP(Z0, Z8)
	EXP(Z1, Z8)
	EXP(Z2, Z9)
	EXP(Z3, Z9)
	EXP(Z4, Z10)
	EXP(Z5, Z10)
	EXP(Z6, Z11)
	EXP(Z7, Z11)

	SUM_ROW(Z0, Y0, Z1, Y1, Z8, Z12, Y12)
	SUM_ROW(Z2, Y2, Z3, Y3, Z9, Z13, Y13)
	SUM_ROW(Z4, Y4, Z5, Y5, Z10, Z14, Y14)
	SUM_ROW(Z6, Y6, Z7, Y7, Z11, Z15, Y15)

	MOVQ  $0x3ff0000000000000, AX // 1.0
	VMOVQ AX, X15
	LEAQ  (DI)(R9*2), BX
	LEAQ  (BX)(R9*1), R10
	LEAQ  (DI)(R9*1), AX
	NORM_ROW(Z0, Z1, Z8, Y8, X8, DI)
	NORM_ROW(Z2, Z3, Z9, Y9, X9, AX)
	NORM_ROW(Z4, Z5, Z10, Y10, X10, BX)
	NORM_ROW(Z6, Z7, Z11, Y11, X11, R10)
	VZEROUPPER
	MOVB $1, ret+48(FP)
	RET

special:
	VZEROUPPER
	MOVB $0, ret+48(FP)
	RET
