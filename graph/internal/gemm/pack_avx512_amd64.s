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

// PAIR makes in Z4 16 slots of pairs from the values in Z0 (the low
// halves) and Z1 (the high ones).
#define PAIR \
	ROUND(Z0, Z2, Z3); \
	ROUND(Z1, Z4, Z5); \
	VPSRLD $16, Z2, Z2; \
	VPANDD Z18, Z4, Z4; \
	VPORD  Z2, Z4, Z4

// func pairStrip(dst *float32, off1 int, masks int, src *float32, ld, kc, wb int)
//
// Packs a strip of up to 16 lines lying side by side (a transposed A, an
// untransposed B: element q of line i at src[q·ld+i]) as slots of bfloat16
// pairs: for each pair of rows 2q and 2q+1, lane i holds element 2q of line
// i in its low half and 2q+1 in its high half, the last row of an odd kc
// pairing with zero; lanes not in masks>>32 are read as zero. Row q of
// pairs is stored wb·q bytes past dst under the mask masks&0xffff, and
// wb·q+off1 bytes past it under masks>>16&0xffff (a strip across two
// panels). It rounds with AVX-512F integer operations, which VCVTNE2PS2BF16
// and a VPERMW to pair its halves did not beat on Zen 4 (docs/bf16.md).
TEXT ·pairStrip(SB), NOSPLIT, $0-56
	MOVQ  dst+0(FP), DI
	MOVQ  off1+8(FP), R13
	MOVQ  masks+16(FP), AX
	KMOVW AX, K4
	SHRQ  $16, AX
	KMOVW AX, K5
	SHRQ  $16, AX
	KMOVW AX, K1
	MOVQ  src+24(FP), SI
	MOVQ  ld+32(FP), R9
	SHLQ  $2, R9
	MOVQ  kc+40(FP), CX
	MOVQ  wb+48(FP), R8
	CONSTANTS

pairs:
	CMPQ        CX, $2
	JB          last
	VMOVDQU32.Z (SI), K1, Z0
	VMOVDQU32.Z (SI)(R9*1), K1, Z1
	PAIR
	VMOVDQU32   Z4, K4, (DI)
	KORTESTW    K5, K5 // a store under an empty mask is slow
	JZ          stored
	VMOVDQU32   Z4, K5, (DI)(R13*1)

stored:
	LEAQ (SI)(R9*2), SI
	ADDQ R8, DI
	SUBQ $2, CX
	JMP  pairs

last:
	TESTQ       CX, CX
	JZ          done
	VMOVDQU32.Z (SI), K1, Z0
	VPXORD      Z1, Z1, Z1
	PAIR
	VMOVDQU32   Z4, K4, (DI)
	KORTESTW    K5, K5
	JZ          done
	VMOVDQU32   Z4, K5, (DI)(R13*1)

done:
	VZEROUPPER
	RET
