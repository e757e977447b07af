#include "textflag.h"

// The packers of the AVX512_BF16 GEMM (see pairing in bf16.go): they round
// float32 values to bfloat16 with VCVTNE2PS2BF16, 32 at a time, and lay the
// pairs out in the panels the micro-kernel reads: lines by transposing
// them, strips by interleaving two rows with VPERMW. Go's assembler
// has no mnemonic for VCVTNE2PS2BF16, so it is written as bytes, each
// line's comment naming the instruction (Intel's operand order:
// destination, first source, second source, whose 16 values fill the low
// half); TestBF16Encodings disassembles them.

// func pairLines16(dst *float32, wb int, mask int, src *float32, offs *[16]int, kc int)
//
// Packs up to 16 lines whose elements are contiguous (an untransposed A, a
// transposed B): line i starts offs[i] bytes past src and holds kc values.
// 32 values of each line at a time become 16 slots of pairs (VCVTNE2PS2BF16,
// the values past kc read as zero, so the last slot of an odd kc pairs with
// zero), and a 16×16 transposition turns them into 16 rows of the panel,
// one per slot, each stored at dst + q·wb bytes under mask (the lines that
// exist and belong to the panel).
TEXT ·pairLines16(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ wb+8(FP), R8
	MOVQ mask+16(FP), AX
	KMOVW AX, K3
	MOVQ src+24(FP), SI
	MOVQ offs+32(FP), R10
	MOVQ kc+40(FP), CX
	// DX counts the slots left: (kc+1)/2.
	MOVQ CX, DX
	INCQ DX
	SHRQ $1, DX

group:
	// K1 and K2 select the values of the group's first and second 16
	// that lie within kc.
	MOVL  $0xffff, AX
	MOVL  $0xffff, BX
	CMPQ  CX, $32
	JAE   masked
	MOVQ  CX, R11
	CMPQ  R11, $16
	JB    short
	SUBQ  $16, R11
	MOVL  $1, BX
	SHLXL R11, BX, BX
	DECL  BX
	JMP   masked

short:
	MOVL  $1, AX
	SHLXL R11, AX, AX
	DECL  AX
	XORL  BX, BX

masked:
	KMOVW AX, K1
	KMOVW BX, K2

	// A load under an empty mask is slow: the second 16 of a short group are
	// zero without one.
	TESTL BX, BX
	JZ    half
	MOVQ        0(R10), R11
	VMOVDQU32.Z (SI)(R11*1), K1, Z30
	VMOVDQU32.Z 64(SI)(R11*1), K2, Z29
	BYTE $0x62; BYTE $0x92; BYTE $0x17; BYTE $0x40; BYTE $0x72; BYTE $0xC6 // VCVTNE2PS2BF16 Z0, Z29, Z30
	MOVQ        8(R10), R11
	VMOVDQU32.Z (SI)(R11*1), K1, Z30
	VMOVDQU32.Z 64(SI)(R11*1), K2, Z29
	BYTE $0x62; BYTE $0x92; BYTE $0x17; BYTE $0x40; BYTE $0x72; BYTE $0xCE // VCVTNE2PS2BF16 Z1, Z29, Z30
	MOVQ        16(R10), R11
	VMOVDQU32.Z (SI)(R11*1), K1, Z30
	VMOVDQU32.Z 64(SI)(R11*1), K2, Z29
	BYTE $0x62; BYTE $0x92; BYTE $0x17; BYTE $0x40; BYTE $0x72; BYTE $0xD6 // VCVTNE2PS2BF16 Z2, Z29, Z30
	MOVQ        24(R10), R11
	VMOVDQU32.Z (SI)(R11*1), K1, Z30
	VMOVDQU32.Z 64(SI)(R11*1), K2, Z29
	BYTE $0x62; BYTE $0x92; BYTE $0x17; BYTE $0x40; BYTE $0x72; BYTE $0xDE // VCVTNE2PS2BF16 Z3, Z29, Z30
	MOVQ        32(R10), R11
	VMOVDQU32.Z (SI)(R11*1), K1, Z30
	VMOVDQU32.Z 64(SI)(R11*1), K2, Z29
	BYTE $0x62; BYTE $0x92; BYTE $0x17; BYTE $0x40; BYTE $0x72; BYTE $0xE6 // VCVTNE2PS2BF16 Z4, Z29, Z30
	MOVQ        40(R10), R11
	VMOVDQU32.Z (SI)(R11*1), K1, Z30
	VMOVDQU32.Z 64(SI)(R11*1), K2, Z29
	BYTE $0x62; BYTE $0x92; BYTE $0x17; BYTE $0x40; BYTE $0x72; BYTE $0xEE // VCVTNE2PS2BF16 Z5, Z29, Z30
	MOVQ        48(R10), R11
	VMOVDQU32.Z (SI)(R11*1), K1, Z30
	VMOVDQU32.Z 64(SI)(R11*1), K2, Z29
	BYTE $0x62; BYTE $0x92; BYTE $0x17; BYTE $0x40; BYTE $0x72; BYTE $0xF6 // VCVTNE2PS2BF16 Z6, Z29, Z30
	MOVQ        56(R10), R11
	VMOVDQU32.Z (SI)(R11*1), K1, Z30
	VMOVDQU32.Z 64(SI)(R11*1), K2, Z29
	BYTE $0x62; BYTE $0x92; BYTE $0x17; BYTE $0x40; BYTE $0x72; BYTE $0xFE // VCVTNE2PS2BF16 Z7, Z29, Z30
	MOVQ        64(R10), R11
	VMOVDQU32.Z (SI)(R11*1), K1, Z30
	VMOVDQU32.Z 64(SI)(R11*1), K2, Z29
	BYTE $0x62; BYTE $0x12; BYTE $0x17; BYTE $0x40; BYTE $0x72; BYTE $0xC6 // VCVTNE2PS2BF16 Z8, Z29, Z30
	MOVQ        72(R10), R11
	VMOVDQU32.Z (SI)(R11*1), K1, Z30
	VMOVDQU32.Z 64(SI)(R11*1), K2, Z29
	BYTE $0x62; BYTE $0x12; BYTE $0x17; BYTE $0x40; BYTE $0x72; BYTE $0xCE // VCVTNE2PS2BF16 Z9, Z29, Z30
	MOVQ        80(R10), R11
	VMOVDQU32.Z (SI)(R11*1), K1, Z30
	VMOVDQU32.Z 64(SI)(R11*1), K2, Z29
	BYTE $0x62; BYTE $0x12; BYTE $0x17; BYTE $0x40; BYTE $0x72; BYTE $0xD6 // VCVTNE2PS2BF16 Z10, Z29, Z30
	MOVQ        88(R10), R11
	VMOVDQU32.Z (SI)(R11*1), K1, Z30
	VMOVDQU32.Z 64(SI)(R11*1), K2, Z29
	BYTE $0x62; BYTE $0x12; BYTE $0x17; BYTE $0x40; BYTE $0x72; BYTE $0xDE // VCVTNE2PS2BF16 Z11, Z29, Z30
	MOVQ        96(R10), R11
	VMOVDQU32.Z (SI)(R11*1), K1, Z30
	VMOVDQU32.Z 64(SI)(R11*1), K2, Z29
	BYTE $0x62; BYTE $0x12; BYTE $0x17; BYTE $0x40; BYTE $0x72; BYTE $0xE6 // VCVTNE2PS2BF16 Z12, Z29, Z30
	MOVQ        104(R10), R11
	VMOVDQU32.Z (SI)(R11*1), K1, Z30
	VMOVDQU32.Z 64(SI)(R11*1), K2, Z29
	BYTE $0x62; BYTE $0x12; BYTE $0x17; BYTE $0x40; BYTE $0x72; BYTE $0xEE // VCVTNE2PS2BF16 Z13, Z29, Z30
	MOVQ        112(R10), R11
	VMOVDQU32.Z (SI)(R11*1), K1, Z30
	VMOVDQU32.Z 64(SI)(R11*1), K2, Z29
	BYTE $0x62; BYTE $0x12; BYTE $0x17; BYTE $0x40; BYTE $0x72; BYTE $0xF6 // VCVTNE2PS2BF16 Z14, Z29, Z30
	MOVQ        120(R10), R11
	VMOVDQU32.Z (SI)(R11*1), K1, Z30
	VMOVDQU32.Z 64(SI)(R11*1), K2, Z29
	BYTE $0x62; BYTE $0x12; BYTE $0x17; BYTE $0x40; BYTE $0x72; BYTE $0xFE // VCVTNE2PS2BF16 Z15, Z29, Z30
	JMP transpose

half:
	VPXORD Z29, Z29, Z29
	MOVQ        0(R10), R11
	VMOVDQU32.Z (SI)(R11*1), K1, Z30
	BYTE $0x62; BYTE $0x92; BYTE $0x17; BYTE $0x40; BYTE $0x72; BYTE $0xC6 // VCVTNE2PS2BF16 Z0, Z29, Z30
	MOVQ        8(R10), R11
	VMOVDQU32.Z (SI)(R11*1), K1, Z30
	BYTE $0x62; BYTE $0x92; BYTE $0x17; BYTE $0x40; BYTE $0x72; BYTE $0xCE // VCVTNE2PS2BF16 Z1, Z29, Z30
	MOVQ        16(R10), R11
	VMOVDQU32.Z (SI)(R11*1), K1, Z30
	BYTE $0x62; BYTE $0x92; BYTE $0x17; BYTE $0x40; BYTE $0x72; BYTE $0xD6 // VCVTNE2PS2BF16 Z2, Z29, Z30
	MOVQ        24(R10), R11
	VMOVDQU32.Z (SI)(R11*1), K1, Z30
	BYTE $0x62; BYTE $0x92; BYTE $0x17; BYTE $0x40; BYTE $0x72; BYTE $0xDE // VCVTNE2PS2BF16 Z3, Z29, Z30
	MOVQ        32(R10), R11
	VMOVDQU32.Z (SI)(R11*1), K1, Z30
	BYTE $0x62; BYTE $0x92; BYTE $0x17; BYTE $0x40; BYTE $0x72; BYTE $0xE6 // VCVTNE2PS2BF16 Z4, Z29, Z30
	MOVQ        40(R10), R11
	VMOVDQU32.Z (SI)(R11*1), K1, Z30
	BYTE $0x62; BYTE $0x92; BYTE $0x17; BYTE $0x40; BYTE $0x72; BYTE $0xEE // VCVTNE2PS2BF16 Z5, Z29, Z30
	MOVQ        48(R10), R11
	VMOVDQU32.Z (SI)(R11*1), K1, Z30
	BYTE $0x62; BYTE $0x92; BYTE $0x17; BYTE $0x40; BYTE $0x72; BYTE $0xF6 // VCVTNE2PS2BF16 Z6, Z29, Z30
	MOVQ        56(R10), R11
	VMOVDQU32.Z (SI)(R11*1), K1, Z30
	BYTE $0x62; BYTE $0x92; BYTE $0x17; BYTE $0x40; BYTE $0x72; BYTE $0xFE // VCVTNE2PS2BF16 Z7, Z29, Z30
	MOVQ        64(R10), R11
	VMOVDQU32.Z (SI)(R11*1), K1, Z30
	BYTE $0x62; BYTE $0x12; BYTE $0x17; BYTE $0x40; BYTE $0x72; BYTE $0xC6 // VCVTNE2PS2BF16 Z8, Z29, Z30
	MOVQ        72(R10), R11
	VMOVDQU32.Z (SI)(R11*1), K1, Z30
	BYTE $0x62; BYTE $0x12; BYTE $0x17; BYTE $0x40; BYTE $0x72; BYTE $0xCE // VCVTNE2PS2BF16 Z9, Z29, Z30
	MOVQ        80(R10), R11
	VMOVDQU32.Z (SI)(R11*1), K1, Z30
	BYTE $0x62; BYTE $0x12; BYTE $0x17; BYTE $0x40; BYTE $0x72; BYTE $0xD6 // VCVTNE2PS2BF16 Z10, Z29, Z30
	MOVQ        88(R10), R11
	VMOVDQU32.Z (SI)(R11*1), K1, Z30
	BYTE $0x62; BYTE $0x12; BYTE $0x17; BYTE $0x40; BYTE $0x72; BYTE $0xDE // VCVTNE2PS2BF16 Z11, Z29, Z30
	MOVQ        96(R10), R11
	VMOVDQU32.Z (SI)(R11*1), K1, Z30
	BYTE $0x62; BYTE $0x12; BYTE $0x17; BYTE $0x40; BYTE $0x72; BYTE $0xE6 // VCVTNE2PS2BF16 Z12, Z29, Z30
	MOVQ        104(R10), R11
	VMOVDQU32.Z (SI)(R11*1), K1, Z30
	BYTE $0x62; BYTE $0x12; BYTE $0x17; BYTE $0x40; BYTE $0x72; BYTE $0xEE // VCVTNE2PS2BF16 Z13, Z29, Z30
	MOVQ        112(R10), R11
	VMOVDQU32.Z (SI)(R11*1), K1, Z30
	BYTE $0x62; BYTE $0x12; BYTE $0x17; BYTE $0x40; BYTE $0x72; BYTE $0xF6 // VCVTNE2PS2BF16 Z14, Z29, Z30
	MOVQ        120(R10), R11
	VMOVDQU32.Z (SI)(R11*1), K1, Z30
	BYTE $0x62; BYTE $0x12; BYTE $0x17; BYTE $0x40; BYTE $0x72; BYTE $0xFE // VCVTNE2PS2BF16 Z15, Z29, Z30

transpose:

	// The transposition: Zi holds the 16 slots of line i; after it, Zs
	// holds slot s of the 16 lines. Within 128-bit lanes, first pairs of
	// lines interleave their slots (dwords), then pairs of pairs (qwords),
	// so that lane L of Z(4G+e) holds slot 4L+e of lines 4G to 4G+3; two
	// rounds of lane shuffles then transpose the 4×4 lanes.
	VUNPCKLPS Z1, Z0, Z16
	VUNPCKHPS Z1, Z0, Z17
	VUNPCKLPS Z3, Z2, Z18
	VUNPCKHPS Z3, Z2, Z19
	VUNPCKLPS Z5, Z4, Z20
	VUNPCKHPS Z5, Z4, Z21
	VUNPCKLPS Z7, Z6, Z22
	VUNPCKHPS Z7, Z6, Z23
	VUNPCKLPS Z9, Z8, Z24
	VUNPCKHPS Z9, Z8, Z25
	VUNPCKLPS Z11, Z10, Z26
	VUNPCKHPS Z11, Z10, Z27
	VUNPCKLPS Z13, Z12, Z28
	VUNPCKHPS Z13, Z12, Z29
	VUNPCKLPS Z15, Z14, Z30
	VUNPCKHPS Z15, Z14, Z31
	VUNPCKLPD Z18, Z16, Z0
	VUNPCKHPD Z18, Z16, Z1
	VUNPCKLPD Z19, Z17, Z2
	VUNPCKHPD Z19, Z17, Z3
	VUNPCKLPD Z22, Z20, Z4
	VUNPCKHPD Z22, Z20, Z5
	VUNPCKLPD Z23, Z21, Z6
	VUNPCKHPD Z23, Z21, Z7
	VUNPCKLPD Z26, Z24, Z8
	VUNPCKHPD Z26, Z24, Z9
	VUNPCKLPD Z27, Z25, Z10
	VUNPCKHPD Z27, Z25, Z11
	VUNPCKLPD Z30, Z28, Z12
	VUNPCKHPD Z30, Z28, Z13
	VUNPCKLPD Z31, Z29, Z14
	VUNPCKHPD Z31, Z29, Z15
	VSHUFF32X4 $0x44, Z4, Z0, Z16
	VSHUFF32X4 $0xee, Z4, Z0, Z17
	VSHUFF32X4 $0x44, Z12, Z8, Z18
	VSHUFF32X4 $0xee, Z12, Z8, Z19
	VSHUFF32X4 $0x44, Z5, Z1, Z20
	VSHUFF32X4 $0xee, Z5, Z1, Z21
	VSHUFF32X4 $0x44, Z13, Z9, Z22
	VSHUFF32X4 $0xee, Z13, Z9, Z23
	VSHUFF32X4 $0x44, Z6, Z2, Z24
	VSHUFF32X4 $0xee, Z6, Z2, Z25
	VSHUFF32X4 $0x44, Z14, Z10, Z26
	VSHUFF32X4 $0xee, Z14, Z10, Z27
	VSHUFF32X4 $0x44, Z7, Z3, Z28
	VSHUFF32X4 $0xee, Z7, Z3, Z29
	VSHUFF32X4 $0x44, Z15, Z11, Z30
	VSHUFF32X4 $0xee, Z15, Z11, Z31
	VSHUFF32X4 $0x88, Z18, Z16, Z0
	VSHUFF32X4 $0xdd, Z18, Z16, Z4
	VSHUFF32X4 $0x88, Z19, Z17, Z8
	VSHUFF32X4 $0xdd, Z19, Z17, Z12
	VSHUFF32X4 $0x88, Z22, Z20, Z1
	VSHUFF32X4 $0xdd, Z22, Z20, Z5
	VSHUFF32X4 $0x88, Z23, Z21, Z9
	VSHUFF32X4 $0xdd, Z23, Z21, Z13
	VSHUFF32X4 $0x88, Z26, Z24, Z2
	VSHUFF32X4 $0xdd, Z26, Z24, Z6
	VSHUFF32X4 $0x88, Z27, Z25, Z10
	VSHUFF32X4 $0xdd, Z27, Z25, Z14
	VSHUFF32X4 $0x88, Z30, Z28, Z3
	VSHUFF32X4 $0xdd, Z30, Z28, Z7
	VSHUFF32X4 $0x88, Z31, Z29, Z11
	VSHUFF32X4 $0xdd, Z31, Z29, Z15

	// Store the group's slots, DX of them at most.
	VMOVDQU32 Z0, K3, (DI)
	ADDQ      R8, DI
	CMPQ      DX, $2
	JB        next
	VMOVDQU32 Z1, K3, (DI)
	ADDQ      R8, DI
	CMPQ      DX, $3
	JB        next
	VMOVDQU32 Z2, K3, (DI)
	ADDQ      R8, DI
	CMPQ      DX, $4
	JB        next
	VMOVDQU32 Z3, K3, (DI)
	ADDQ      R8, DI
	CMPQ      DX, $5
	JB        next
	VMOVDQU32 Z4, K3, (DI)
	ADDQ      R8, DI
	CMPQ      DX, $6
	JB        next
	VMOVDQU32 Z5, K3, (DI)
	ADDQ      R8, DI
	CMPQ      DX, $7
	JB        next
	VMOVDQU32 Z6, K3, (DI)
	ADDQ      R8, DI
	CMPQ      DX, $8
	JB        next
	VMOVDQU32 Z7, K3, (DI)
	ADDQ      R8, DI
	CMPQ      DX, $9
	JB        next
	VMOVDQU32 Z8, K3, (DI)
	ADDQ      R8, DI
	CMPQ      DX, $10
	JB        next
	VMOVDQU32 Z9, K3, (DI)
	ADDQ      R8, DI
	CMPQ      DX, $11
	JB        next
	VMOVDQU32 Z10, K3, (DI)
	ADDQ      R8, DI
	CMPQ      DX, $12
	JB        next
	VMOVDQU32 Z11, K3, (DI)
	ADDQ      R8, DI
	CMPQ      DX, $13
	JB        next
	VMOVDQU32 Z12, K3, (DI)
	ADDQ      R8, DI
	CMPQ      DX, $14
	JB        next
	VMOVDQU32 Z13, K3, (DI)
	ADDQ      R8, DI
	CMPQ      DX, $15
	JB        next
	VMOVDQU32 Z14, K3, (DI)
	ADDQ      R8, DI
	CMPQ      DX, $16
	JB        next
	VMOVDQU32 Z15, K3, (DI)
	ADDQ      R8, DI

next:
	ADDQ $128, SI
	SUBQ $32, CX
	SUBQ $16, DX
	JG   group
	VZEROUPPER
	RET

// pairOrder is the VPERMW index that interleaves the two halves of a
// VCVTNE2PS2BF16 result: word 2j takes word j (the even row's value j) and
// word 2j+1 word 16+j (the odd row's).
DATA pairOrder<>+0(SB)/8, $0x0011000100100000
DATA pairOrder<>+8(SB)/8, $0x0013000300120002
DATA pairOrder<>+16(SB)/8, $0x0015000500140004
DATA pairOrder<>+24(SB)/8, $0x0017000700160006
DATA pairOrder<>+32(SB)/8, $0x0019000900180008
DATA pairOrder<>+40(SB)/8, $0x001b000b001a000a
DATA pairOrder<>+48(SB)/8, $0x001d000d001c000c
DATA pairOrder<>+56(SB)/8, $0x001f000f001e000e
GLOBL pairOrder<>(SB), RODATA|NOPTR, $64

// func pairStrip(dst *float32, off1 int, masks int, src *float32, ld, kc, wb int)
//
// Packs a strip of up to 16 lines lying side by side (a transposed A, an
// untransposed B: element q of line i at src[q·ld+i]) as slots of bfloat16
// pairs: for each pair of rows 2q and 2q+1, lane i holds element 2q of line
// i in its low half and 2q+1 in its high half, the last row of an odd kc
// pairing with zero; lanes not in masks>>32 are read as zero. Row q of
// pairs is stored wb·q bytes past dst under the mask masks&0xffff, and
// wb·q+off1 bytes past it under masks>>16&0xffff (a strip across two
// panels); a store under an empty mask, slow on Zen 4, is skipped.
TEXT ·pairStrip(SB), NOSPLIT, $0-56
	MOVQ      dst+0(FP), DI
	MOVQ      off1+8(FP), R13
	MOVQ      masks+16(FP), AX
	KMOVW     AX, K4
	SHRQ      $16, AX
	KMOVW     AX, K5
	SHRQ      $16, AX
	KMOVW     AX, K1
	MOVQ      src+24(FP), SI
	MOVQ      ld+32(FP), R9
	SHLQ      $2, R9
	MOVQ      kc+40(FP), CX
	MOVQ      wb+48(FP), R8
	VMOVDQU64 pairOrder<>(SB), Z31

pairs:
	CMPQ        CX, $2
	JB          last
	VMOVDQU32.Z (SI), K1, Z0
	VMOVDQU32.Z (SI)(R9*1), K1, Z1
	BYTE $0x62; BYTE $0xF2; BYTE $0x77; BYTE $0x48; BYTE $0x72; BYTE $0xD0 // VCVTNE2PS2BF16 Z2, Z1, Z0
	VPERMW      Z2, Z31, Z4
	VMOVDQU32   Z4, K4, (DI)
	KORTESTW    K5, K5
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
	BYTE $0x62; BYTE $0xF2; BYTE $0x77; BYTE $0x48; BYTE $0x72; BYTE $0xD0 // VCVTNE2PS2BF16 Z2, Z1, Z0
	VPERMW      Z2, Z31, Z4
	VMOVDQU32   Z4, K4, (DI)
	KORTESTW    K5, K5
	JZ          done
	VMOVDQU32   Z4, K5, (DI)(R13*1)

done:
	VZEROUPPER
	RET

// func pairRows(dst, src *float32, ld, kc, n int)
//
// Packs n lines of kc contiguous elements (an untransposed A), line i at
// src + 4·ld·i bytes, row after row: line i's (kc+1)/2 slots of pairs at
// dst + 4·i·((kc+1)/2) bytes. 32 values at a time become 16 slots
// (VCVTNE2PS2BF16) stored as they are, no transposition; the last kc mod 32
// values are read under lane masks, those past kc as zero, and stored
// under a mask of their slots.
TEXT ·pairRows(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ ld+16(FP), R8
	SHLQ $2, R8             // bytes from a line of src to the next
	MOVQ kc+24(FP), CX
	MOVQ n+32(FP), DX
	MOVQ CX, R9
	ANDQ $31, R9            // the values past the whole groups of 32
	MOVQ CX, R11
	SHRQ $5, R11            // the whole groups
	MOVL $1, AX
	SHLXQ R9, AX, AX
	DECQ AX
	KMOVW AX, K1            // the first 16 of the last values
	SHRQ $16, AX
	KMOVW AX, K2            // and the rest
	MOVQ R9, R10
	INCQ R10
	SHRQ $1, R10            // their slots
	MOVL $1, AX
	SHLXQ R10, AX, AX
	DECQ AX
	KMOVW AX, K3
	MOVQ CX, AX
	INCQ AX
	SHRQ $1, AX
	SHLQ $2, AX             // bytes from a line of dst to the next

line:
	MOVQ SI, R12
	MOVQ DI, R13
	MOVQ R11, BX
	TESTQ BX, BX
	JZ   last

group:
	VMOVDQU32 (R12), Z30
	VMOVDQU32 64(R12), Z29
	BYTE $0x62; BYTE $0x92; BYTE $0x17; BYTE $0x40; BYTE $0x72; BYTE $0xC6 // VCVTNE2PS2BF16 Z0, Z29, Z30
	VMOVDQU32 Z0, (R13)
	ADDQ $128, R12
	ADDQ $64, R13
	DECQ BX
	JNZ  group

last:
	TESTQ R9, R9
	JZ    next
	VMOVDQU32.Z (R12), K1, Z30
	VPXORD      Z29, Z29, Z29
	CMPQ        R9, $16
	JBE         convert     // no load under an empty mask
	VMOVDQU32.Z 64(R12), K2, Z29

convert:
	BYTE $0x62; BYTE $0x92; BYTE $0x17; BYTE $0x40; BYTE $0x72; BYTE $0xC6 // VCVTNE2PS2BF16 Z0, Z29, Z30
	VMOVDQU32 Z0, K3, (R13)

next:
	ADDQ R8, SI
	ADDQ AX, DI
	DECQ DX
	JNZ  line
	VZEROUPPER
	RET
