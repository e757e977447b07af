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

// func convert512(dst *uint16, src *float32, n int)
//
// Writes ToBF16 of the n float32 values at src to dst.
TEXT ·convert512(SB), NOSPLIT, $0-24
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
	VPSRLD    $16, Z1, Z1
	VPMOVDW   Z1, (DI)
	ADDQ      $64, SI
	ADDQ      $32, DI
	DECQ      DX
	JNZ       loop

tail:
	KORTESTW    K1, K1
	JZ          done
	VMOVDQU32.Z (SI), K1, Z0
	ROUND(Z0, Z1, Z2)
	VPSRLD      $16, Z1, Z1
	VPMOVDW     Z1, K1, (DI)

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

// SINGLE is PAIR for the last row of an odd block: its high halves are 0.
#define SINGLE \
	ROUND(Z0, Z2, Z3); \
	VPSRLD $16, Z2, Z4

// func pairRows512(dst *float32, w int, src *float32, ld, kc, width int)
//
// Packs kc rows of width values, row q at src[q·ld:], as slots of bfloat16
// pairs: slot j of dst's row q (rows w slots apart) holds column j of rows
// 2q (low half) and 2q+1 (high half); the last row of an odd kc pairs with
// zero.
TEXT ·pairRows512(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ w+8(FP), R8
	SHLQ $2, R8
	MOVQ src+16(FP), SI
	MOVQ ld+24(FP), R9
	SHLQ $2, R9
	MOVQ width+40(FP), DX
	CONSTANTS
	TAILMASK(DX)
	SHRQ $4, DX
	MOVQ kc+32(FP), R10

pair:
	CMPQ  R10, $2
	JB    last
	MOVQ  SI, R11
	LEAQ  (SI)(R9*1), R12
	MOVQ  DI, R13
	MOVQ  DX, BX
	TESTQ BX, BX
	JZ    pairtail

pairfull:
	VMOVDQU32 (R11), Z0
	VMOVDQU32 (R12), Z1
	PAIR
	VMOVDQU32 Z4, (R13)
	ADDQ      $64, R11
	ADDQ      $64, R12
	ADDQ      $64, R13
	DECQ      BX
	JNZ       pairfull

pairtail:
	KORTESTW    K1, K1
	JZ          pairnext
	VMOVDQU32.Z (R11), K1, Z0
	VMOVDQU32.Z (R12), K1, Z1
	PAIR
	VMOVDQU32   Z4, K1, (R13)

pairnext:
	LEAQ (SI)(R9*2), SI
	ADDQ R8, DI
	SUBQ $2, R10
	JMP  pair

last:
	TESTQ R10, R10
	JZ    done
	MOVQ  SI, R11
	MOVQ  DI, R13
	MOVQ  DX, BX
	TESTQ BX, BX
	JZ    lasttail

lastfull:
	VMOVDQU32 (R11), Z0
	SINGLE
	VMOVDQU32 Z4, (R13)
	ADDQ      $64, R11
	ADDQ      $64, R13
	DECQ      BX
	JNZ       lastfull

lasttail:
	KORTESTW    K1, K1
	JZ          done
	VMOVDQU32.Z (R11), K1, Z0
	SINGLE
	VMOVDQU32   Z4, K1, (R13)

done:
	VZEROUPPER
	RET
