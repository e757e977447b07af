#include "textflag.h"

// The sums keep their sixteen partial sums in Y0-Y3: Y0 those of elements
// 0-3 mod 16, Y1 of 4-7, Y2 of 8-11 and Y3 of 12-15.

#define ZERO_SUMS \
	VXORPD Y0, Y0, Y0; \
	VXORPD Y1, Y1, Y1; \
	VXORPD Y2, Y2, Y2; \
	VXORPD Y3, Y3, Y3

#define STORE_SUMS \
	VMOVUPD Y0, (DI); \
	VMOVUPD Y1, 32(DI); \
	VMOVUPD Y2, 64(DI); \
	VMOVUPD Y3, 96(DI); \
	VZEROUPPER; \
	RET

// PRODUCTS16 sets Y4-Y7 to the sixteen float32 products a_i·b_i at SI and
// DX, widened to float64.
#define PRODUCTS16 \
	VMOVUPS (SI), Y12; \
	VMULPS (DX), Y12, Y12; \
	VMOVUPS 32(SI), Y13; \
	VMULPS 32(DX), Y13, Y13; \
	VCVTPS2PD X12, Y4; \
	VEXTRACTF128 $1, Y12, X5; \
	VCVTPS2PD X5, Y5; \
	VCVTPS2PD X13, Y6; \
	VEXTRACTF128 $1, Y13, X7; \
	VCVTPS2PD X7, Y7

// func sumAVX2(p *partials, x *float32, n int)
TEXT ·sumAVX2(SB), NOSPLIT, $0-24
	MOVQ p+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	ZERO_SUMS

sum:
	VCVTPS2PD (SI), Y4
	VCVTPS2PD 16(SI), Y5
	VCVTPS2PD 32(SI), Y6
	VCVTPS2PD 48(SI), Y7
	VADDPD Y4, Y0, Y0
	VADDPD Y5, Y1, Y1
	VADDPD Y6, Y2, Y2
	VADDPD Y7, Y3, Y3
	ADDQ $64, SI
	SUBQ $16, CX
	JNZ  sum
	STORE_SUMS

// func dotAVX2(p *partials, a, b *float32, n int)
TEXT ·dotAVX2(SB), NOSPLIT, $0-32
	MOVQ p+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
	ZERO_SUMS

dot:
	PRODUCTS16
	VADDPD Y4, Y0, Y0
	VADDPD Y5, Y1, Y1
	VADDPD Y6, Y2, Y2
	VADDPD Y7, Y3, Y3
	ADDQ $64, SI
	ADDQ $64, DX
	SUBQ $16, CX
	JNZ  dot
	STORE_SUMS

// SQUARE(off, y, acc) adds (x - c)², x the four elements at off(SI) and c
// in Y8, into acc, using y.
#define SQUARE(off, y, acc) \
	VCVTPS2PD off(SI), y; \
	VSUBPD Y8, y, y; \
	VMULPD y, y, y; \
	VADDPD y, acc, acc

// func squaresAVX2(p *partials, x *float32, n int, c float64)
TEXT ·squaresAVX2(SB), NOSPLIT, $0-32
	MOVQ p+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSD c+24(FP), Y8
	ZERO_SUMS

squares:
	SQUARE(0, Y4, Y0)
	SQUARE(16, Y5, Y1)
	SQUARE(32, Y6, Y2)
	SQUARE(48, Y7, Y3)
	ADDQ $64, SI
	SUBQ $16, CX
	JNZ  squares
	STORE_SUMS

// ABOUT(off, d, acc) adds d·(x - c), x the four elements at off(BX) and c
// in Y8, into acc, using Y9.
#define ABOUT(off, d, acc) \
	VCVTPS2PD off(BX), Y9; \
	VSUBPD Y8, Y9, Y9; \
	VMULPD Y9, d, d; \
	VADDPD d, acc, acc

// func dotAboutAVX2(p *partials, a, b, x *float32, n int, c float64)
TEXT ·dotAboutAVX2(SB), NOSPLIT, $0-48
	MOVQ p+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ x+24(FP), BX
	MOVQ n+32(FP), CX
	VBROADCASTSD c+40(FP), Y8
	ZERO_SUMS

dotAbout:
	PRODUCTS16
	ABOUT(0, Y4, Y0)
	ABOUT(16, Y5, Y1)
	ABOUT(32, Y6, Y2)
	ABOUT(48, Y7, Y3)
	ADDQ $64, SI
	ADDQ $64, DX
	ADDQ $64, BX
	SUBQ $16, CX
	JNZ  dotAbout
	STORE_SUMS

// NORMALIZE8 sets Y0 to g·x̂ for the eight elements at SI (x) and DX (g),
// x̂ = (x - mean)·rstd in float64 (mean in Y14, rstd in Y15) rounded to
// float32.
#define NORMALIZE8 \
	VCVTPS2PD (SI), Y0; \
	VCVTPS2PD 16(SI), Y1; \
	VSUBPD Y14, Y0, Y0; \
	VSUBPD Y14, Y1, Y1; \
	VMULPD Y15, Y0, Y0; \
	VMULPD Y15, Y1, Y1; \
	VCVTPD2PSY Y0, X0; \
	VCVTPD2PSY Y1, X1; \
	VINSERTF128 $1, X1, Y0, Y0; \
	VMULPS (DX), Y0, Y0

// func normalizeAVX2(y, x, gain, b *float32, n int, mean, rstd float64)
TEXT ·normalizeAVX2(SB), NOSPLIT, $0-56
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ gain+16(FP), DX
	MOVQ b+24(FP), R8
	MOVQ n+32(FP), CX
	VBROADCASTSD mean+40(FP), Y14
	VBROADCASTSD rstd+48(FP), Y15
	TESTQ R8, R8
	JZ    unbiased

biased:
	NORMALIZE8
	VADDPS (R8), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, R8
	ADDQ $32, DI
	SUBQ $8, CX
	JNZ  biased
	VZEROUPPER
	RET

unbiased:
	NORMALIZE8
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	SUBQ $8, CX
	JNZ  unbiased
	VZEROUPPER
	RET

// GRAD4(gd, xlo, off) sets gd, four g·dy widened to float64, to
// rstd·(gd - md - x̂·mdx), x̂ = (x - mean)·rstd for the four elements of x
// at off(SI), using xlo. mean, rstd, md and mdx are in Y12-Y15.
#define GRAD4(gd, xlo, off) \
	VCVTPS2PD off(SI), xlo; \
	VSUBPD Y12, xlo, xlo; \
	VMULPD Y13, xlo, xlo; \
	VMULPD Y15, xlo, xlo; \
	VSUBPD Y14, gd, gd; \
	VSUBPD xlo, gd, gd; \
	VMULPD Y13, gd, gd

// func normalizeGradAVX2(dx, x, gain, dy *float32, n int, mean, rstd, md, mdx float64)
TEXT ·normalizeGradAVX2(SB), NOSPLIT, $0-72
	MOVQ dx+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ gain+16(FP), DX
	MOVQ dy+24(FP), R8
	MOVQ n+32(FP), CX
	VBROADCASTSD mean+40(FP), Y12
	VBROADCASTSD rstd+48(FP), Y13
	VBROADCASTSD md+56(FP), Y14
	VBROADCASTSD mdx+64(FP), Y15

grad:
	VMOVUPS (DX), Y2
	VMULPS (R8), Y2, Y2
	VCVTPS2PD X2, Y3
	VEXTRACTF128 $1, Y2, X4
	VCVTPS2PD X4, Y4
	GRAD4(Y3, Y0, 0)
	GRAD4(Y4, Y1, 16)
	VCVTPD2PSY Y3, X3
	VCVTPD2PSY Y4, X4
	VINSERTF128 $1, X4, Y3, Y3
	VMOVUPS Y3, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, R8
	ADDQ $32, DI
	SUBQ $8, CX
	JNZ  grad
	VZEROUPPER
	RET

// func addAVX2(y, a, b *float32, n int)
TEXT ·addAVX2(SB), NOSPLIT, $0-32
	MOVQ y+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX

add:
	VMOVUPS (SI), Y0
	VADDPS  (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	SUBQ    $8, CX
	JNZ     add
	VZEROUPPER
	RET

// func reluAVX2(y, x *float32, n int)
TEXT ·reluAVX2(SB), NOSPLIT, $0-24
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX

relu:
	VMOVUPS (SI), Y0
	VPSRAD  $31, Y0, Y1 // all ones where the sign bit is set
	VANDNPS Y0, Y1, Y1
	VMOVUPS Y1, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $8, CX
	JNZ     relu
	VZEROUPPER
	RET

// func reluGradAVX2(dx, x, dy *float32, n int)
TEXT ·reluGradAVX2(SB), NOSPLIT, $0-32
	MOVQ dx+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ dy+16(FP), DX
	MOVQ n+24(FP), CX
	VPXOR Y15, Y15, Y15

reluGrad:
	VMOVUPS  (SI), Y0
	VPCMPGTD Y15, Y0, Y1 // all ones where x's bits are a positive int32
	VANDPS   (DX), Y1, Y1
	VMOVUPS  Y1, (DI)
	ADDQ     $32, SI
	ADDQ     $32, DX
	ADDQ     $32, DI
	SUBQ     $8, CX
	JNZ      reluGrad
	VZEROUPPER
	RET

// func scaleAVX2(y, x *float32, n int, s float32)
TEXT ·scaleAVX2(SB), NOSPLIT, $0-28
	MOVQ         y+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS s+24(FP), Y1

scale:
	VMULPS  (SI), Y1, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $8, CX
	JNZ     scale
	VZEROUPPER
	RET

// The bits of a byte of the dropout mask, one a lane: lane j tests bit j.
DATA maskbits<>+0(SB)/4, $1
DATA maskbits<>+4(SB)/4, $2
DATA maskbits<>+8(SB)/4, $4
DATA maskbits<>+12(SB)/4, $8
DATA maskbits<>+16(SB)/4, $16
DATA maskbits<>+20(SB)/4, $32
DATA maskbits<>+24(SB)/4, $64
DATA maskbits<>+28(SB)/4, $128
GLOBL maskbits<>(SB), RODATA|NOPTR, $32

// func scaleMaskedAVX2(y, x *float32, mask *int, words int, s float32)
//
// Eight elements a step: the step's byte of the mask word is broadcast to
// every lane, and's lane j's bit and compares it with that bit, so the lane
// is all ones where the bit is set; the product s·x_i is and'ed with it.
TEXT ·scaleMaskedAVX2(SB), NOSPLIT, $0-36
	MOVQ         y+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         mask+16(FP), DX
	MOVQ         words+24(FP), CX
	VBROADCASTSS s+32(FP), Y1
	VMOVDQU      maskbits<>(SB), Y2

word:
	MOVQ (DX), AX
	MOVQ $8, BX

byte:
	VMOVD        AX, X3
	VPBROADCASTD X3, Y3
	VPAND        Y2, Y3, Y3
	VPCMPEQD     Y2, Y3, Y3
	VMULPS       (SI), Y1, Y0
	VANDPS       Y3, Y0, Y0
	VMOVUPS      Y0, (DI)
	SHRQ         $8, AX
	ADDQ         $32, SI
	ADDQ         $32, DI
	DECQ         BX
	JNZ          byte
	ADDQ         $8, DX
	DECQ         CX
	JNZ          word
	VZEROUPPER
	RET
