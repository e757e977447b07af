#include "textflag.h"

// func update32AVX2(c *consts, theta, grad, m, v *float32, n int)
//
// Eight elements at a time: the moments in float32, the step in float64
// (two halves of four), each operation rounded on its own as update's are.
TEXT ·update32AVX2(SB), NOSPLIT, $0-48
	MOVQ c+0(FP), AX
	MOVQ theta+8(FP), DI
	MOVQ grad+16(FP), SI
	MOVQ m+24(FP), R8
	MOVQ v+32(FP), R9
	MOVQ n+40(FP), CX
	VBROADCASTSS 0(AX), Y10  // β1
	VBROADCASTSS 4(AX), Y11  // 1-β1
	VBROADCASTSS 8(AX), Y12  // β2
	VBROADCASTSS 12(AX), Y13 // 1-β2
	VBROADCASTSS 16(AX), Y14 // scale
	VBROADCASTSS 20(AX), Y15 // keep
	SHRQ $3, CX

loop:
	VMOVUPS (SI), Y0
	VMULPS  Y14, Y0, Y0 // g·scale
	VMOVUPS (R8), Y1
	VMULPS  Y10, Y1, Y1
	VMULPS  Y11, Y0, Y2
	VADDPS  Y2, Y1, Y1  // m = β1·m + (1-β1)·g
	VMOVUPS Y1, (R8)
	VMOVUPS (R9), Y3
	VMULPS  Y12, Y3, Y3
	VMULPS  Y13, Y0, Y4
	VMULPS  Y0, Y4, Y4
	VADDPS  Y4, Y3, Y3  // v = β2·v + (1-β2)·g·g
	VMOVUPS Y3, (R9)

	VCVTPS2PD    X1, Y5
	VEXTRACTF128 $1, Y1, X6
	VCVTPS2PD    X6, Y6
	VCVTPS2PD    X3, Y7
	VEXTRACTF128 $1, Y3, X8
	VCVTPS2PD    X8, Y8
	VBROADCASTSD 32(AX), Y9
	VMULPD       Y9, Y5, Y5 // step·m
	VMULPD       Y9, Y6, Y6
	VSQRTPD      Y7, Y7
	VSQRTPD      Y8, Y8
	VBROADCASTSD 40(AX), Y9
	VMULPD       Y9, Y7, Y7 // sqrt(v)·rc2
	VMULPD       Y9, Y8, Y8
	VBROADCASTSD 48(AX), Y9
	VADDPD       Y9, Y7, Y7 // + ε
	VADDPD       Y9, Y8, Y8
	VDIVPD       Y7, Y5, Y5
	VDIVPD       Y8, Y6, Y6
	VCVTPD2PSY   Y5, X5
	VCVTPD2PSY   Y6, X6
	VINSERTF128  $1, X6, Y5, Y5

	VMOVUPS (DI), Y9
	VMULPS  Y15, Y9, Y9 // θ·keep
	VSUBPS  Y5, Y9, Y9
	VMOVUPS Y9, (DI)

	ADDQ $32, SI
	ADDQ $32, DI
	ADDQ $32, R8
	ADDQ $32, R9
	DECQ CX
	JNZ  loop
	VZEROUPPER
	RET
