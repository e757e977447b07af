#include "textflag.h"

// Rounding to bfloat16 with AVX-512F integer operations on the bits of 16
// float32 values at a time, as ToBF16 does: b + 0x7fff + (b>>16 & 1); a NaN
// keeps its top bits with its quiet bit set; a zero or subnormal becomes a
// zero of its sign. Masked loads and stores take the last n mod 16 values,
// so no value is left to Go. These run on any CPU with AVX-512F, with
// AVX512_BF16 or without.
//
// The constants live in Z16-Z22 (CONSTANTS); ROUND leaves in r the rounded
// value with its low half not yet cleared, using t, K2 and K3.

#define CONSTANTS \
	MOVL $1, AX; \
	VPBROADCASTD AX, Z16; \
	MOVL $0x7fff, AX; \
	VPBROADCASTD AX, Z17; \
	MOVL $0xffff0000, AX; \
	VPBROADCASTD AX, Z18; \
	MOVL $0x7fffffff, AX; \
	VPBROADCASTD AX, Z19; \
	MOVL $0x7f800000, AX; \
	VPBROADCASTD AX, Z20; \
	MOVL $0x00400000, AX; \
	VPBROADCASTD AX, Z21; \
	MOVL $0x80000000, AX; \
	VPBROADCASTD AX, Z22

#define ROUND(x, r, t) \
	VPSRLD    $16, x, r; \
	VPANDD    Z16, r, r; \
	VPADDD    Z17, r, r; \
	VPADDD    x, r, r; \
	VPANDD    Z19, x, t; \
	VPCMPGTD  Z20, t, K2; \
	VPORD     Z21, x, K2, r; \
	VPTESTNMD Z20, x, K3; \
	VPANDD    Z22, x, K3, r

// TAILMASK sets K1 to the low (n mod 16) bits of n, which it keeps in reg;
// it uses CX.
#define TAILMASK(reg) \
	MOVQ reg, CX; \
	ANDQ $15, CX; \
	MOVL $1, AX; \
	SHLL CX, AX; \
	DECL AX; \
	KMOVW AX, K1

// func round512(dst, src *float32, n int)
//
// Writes the n float32 values at src rounded to bfloat16 to dst, as
// RoundBF16 does.
TEXT ·round512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), DX
	CONSTANTS
	TAILMASK(DX)
	SHRQ $4, DX
	JZ   tail

loop:
	VMOVDQU32 (SI), Z0
	ROUND(Z0, Z1, Z2)
	VPANDD    Z18, Z1, Z1
	VMOVDQU32 Z1, (DI)
	ADDQ      $64, SI
	ADDQ      $64, DI
	DECQ      DX
	JNZ       loop

tail:
	KORTESTW    K1, K1
	JZ          done
	VMOVDQU32.Z (SI), K1, Z0
	ROUND(Z0, Z1, Z2)
	VPANDD      Z18, Z1, Z1
	VMOVDQU32   Z1, K1, (DI)

done:
	VZEROUPPER
	RET
