#include "textflag.h"

// TRANSPOSE4 loads four rows of 8 values from SI, SI+ld, SI+2ld and SI+3ld
// (ld in R9, 3·ld in R10) and transposes them within each 128-bit lane:
// one unpack and one shuffle stage leave the columns 0|4, 1|5, 2|6 and 3|7
// in the two halves of Y0-Y3. It uses Y4-Y7.
#define TRANSPOSE4 \
	VMOVUPS   (SI), Y0; \
	VMOVUPS   (SI)(R9*1), Y1; \
	VMOVUPS   (SI)(R9*2), Y2; \
	VMOVUPS   (SI)(R10*1), Y3; \
	VUNPCKLPS Y1, Y0, Y4; \
	VUNPCKHPS Y1, Y0, Y5; \
	VUNPCKLPS Y3, Y2, Y6; \
	VUNPCKHPS Y3, Y2, Y7; \
	VSHUFPS   $0x44, Y6, Y4, Y0; \
	VSHUFPS   $0xEE, Y6, Y4, Y1; \
	VSHUFPS   $0x44, Y7, Y5, Y2; \
	VSHUFPS   $0xEE, Y7, Y5, Y3

// func transpose4x8(dst *float32, w int, src *float32, ld int, n int)
//
// For each of n blocks of 4 rows × 8 columns of src, moving 8 columns right
// each time, writes the block's 8 columns as rows of 4 values at dst, dst+w,
// …, dst+7w, from the halves of Y0-Y3 that TRANSPOSE4 leaves.
TEXT ·transpose4x8(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ w+8(FP), R8
	MOVQ src+16(FP), SI
	MOVQ ld+24(FP), R9
	MOVQ n+32(FP), CX
	SHLQ $2, R8                // w in bytes
	SHLQ $2, R9                // ld in bytes
	LEAQ (R9)(R9*2), R10       // 3·ld
	LEAQ (R8)(R8*2), R11       // 3·w
	LEAQ (R8)(R8*4), R12       // 5·w, from column 0 to column 5
	TESTQ CX, CX
	JZ    done

loop:
	TRANSPOSE4
	VMOVUPS      X0, (DI)
	VMOVUPS      X1, (DI)(R8*1)
	VMOVUPS      X2, (DI)(R8*2)
	VMOVUPS      X3, (DI)(R11*1)
	LEAQ         (DI)(R8*4), BX  // column 4
	VEXTRACTF128 $1, Y0, (BX)
	VEXTRACTF128 $1, Y1, (DI)(R12*1)
	VEXTRACTF128 $1, Y2, (BX)(R8*2)
	VEXTRACTF128 $1, Y3, (BX)(R11*1)
	LEAQ         (BX)(R8*4), DI  // column 8
	ADDQ         $32, SI
	DECQ         CX
	JNZ          loop

done:
	VZEROUPPER
	RET

// func copyRows(dst *float32, w int, src *float32, ld int, rows, cols int)
//
// Copies rows rows of cols ≥ 4 values from src (leading dimension ld) to dst
// (leading dimension w). Rows of 8 or more values go 8 at a time, the last 8
// of a row overlapping the ones before; shorter rows go as their first and
// last 4 values.
TEXT ·copyRows(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ w+8(FP), R8
	MOVQ src+16(FP), SI
	MOVQ ld+24(FP), R9
	MOVQ rows+32(FP), CX
	MOVQ cols+40(FP), R10
	SHLQ $2, R8
	SHLQ $2, R9
	TESTQ CX, CX
	JZ    done
	CMPQ  R10, $8
	JLT   short
	SUBQ  $8, R10              // start of the last 8 values of a row

row:
	XORQ AX, AX

chunk:
	CMPQ    AX, R10
	JGE     last
	VMOVUPS (SI)(AX*4), Y0
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ    $8, AX
	JMP     chunk

last:
	VMOVUPS (SI)(R10*4), Y0
	VMOVUPS Y0, (DI)(R10*4)
	ADDQ    R9, SI
	ADDQ    R8, DI
	DECQ    CX
	JNZ     row
	JMP     done

short:
	SUBQ $4, R10               // start of the last 4 values of a row

shortrow:
	VMOVUPS (SI), X0
	VMOVUPS (SI)(R10*4), X1
	VMOVUPS X0, (DI)
	VMOVUPS X1, (DI)(R10*4)
	ADDQ    R9, SI
	ADDQ    R8, DI
	DECQ    CX
	JNZ     shortrow

done:
	VZEROUPPER
	RET

// func transpose6x8(dst *float32, src *float32, ld int, n int)
//
// For each of n blocks of 6 rows × 8 columns of src, moving 8 columns right
// each time, writes the block's 8 columns of 6 values one after the other:
// 48 contiguous values at dst, then the next 48. Within each 128-bit lane
// (columns 0-3 low, 4-7 high), rows 0-3 are transposed into T0-T3 (Y0-Y3,
// by TRANSPOSE4), rows 4-5 interleaved into U0 (columns 0, 1) and U1
// (columns 2, 3), and the pairs of U shuffled between the columns of T, so
// that the lane's 24 values are T0, S1, S2, T2, S3, S4, four at a time:
//
//	T0 = a00 a10 a20 a30   S1 = a40 a50 a01 a11   S2 = a21 a31 a41 a51
//	T2 = a02 a12 a22 a32   S3 = a42 a52 a03 a13   S4 = a23 a33 a43 a53
//
// The low lanes make the first 24 values, the high lanes the next.
TEXT ·transpose6x8(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ ld+16(FP), R9
	MOVQ n+24(FP), CX
	SHLQ $2, R9                // ld in bytes
	LEAQ (R9)(R9*2), R10       // 3·ld
	LEAQ (R9)(R9*4), R11       // 5·ld
	TESTQ CX, CX
	JZ    done

loop:
	TRANSPOSE4                 // T0-T3 in Y0-Y3
	VMOVUPS    (SI)(R9*4), Y4
	VMOVUPS    (SI)(R11*1), Y5
	VUNPCKLPS  Y5, Y4, Y6      // U0 = a40 a50 a41 a51
	VUNPCKHPS  Y5, Y4, Y7      // U1 = a42 a52 a43 a53
	VSHUFPS    $0x44, Y1, Y6, Y8 // S1
	VSHUFPS    $0xEE, Y6, Y1, Y9 // S2
	VSHUFPS    $0x44, Y3, Y7, Y10 // S3
	VSHUFPS    $0xEE, Y7, Y3, Y11 // S4
	VPERM2F128 $0x20, Y8, Y0, Y12 // low lanes of T0, S1
	VPERM2F128 $0x20, Y2, Y9, Y13 // low lanes of S2, T2
	VPERM2F128 $0x20, Y11, Y10, Y14 // low lanes of S3, S4
	VPERM2F128 $0x31, Y8, Y0, Y0 // high lanes of T0, S1
	VPERM2F128 $0x31, Y2, Y9, Y1 // high lanes of S2, T2
	VPERM2F128 $0x31, Y11, Y10, Y2 // high lanes of S3, S4
	VMOVUPS    Y12, (DI)
	VMOVUPS    Y13, 32(DI)
	VMOVUPS    Y14, 64(DI)
	VMOVUPS    Y0, 96(DI)
	VMOVUPS    Y1, 128(DI)
	VMOVUPS    Y2, 160(DI)
	ADDQ       $192, DI
	ADDQ       $32, SI
	DECQ       CX
	JNZ        loop

done:
	VZEROUPPER
	RET

// func roundBF16(dst, src *float32, n int)
//
// Writes the n float32 values at src (n a multiple of 8) rounded to
// bfloat16 to dst, as ToBF16 then FromBF16 do, eight at a time with AVX2 integer
// operations on their bits: b + 0x7fff + (b>>16 & 1), its low half cleared;
// a NaN keeps its top bits with its quiet bit set; a zero or subnormal
// becomes a zero of its sign. The constants go in with VMOVQ: SSE's MOVQ
// after AVX code costs a state transition (hundreds of nanoseconds a call
// here).
TEXT ·roundBF16(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $3, CX
	JZ   done
	MOVL $1, AX
	VMOVQ AX, X8
	VPBROADCASTD X8, Y8            // 1
	MOVL $0x7fff, AX
	VMOVQ AX, X9
	VPBROADCASTD X9, Y9            // 0x7fff
	MOVL $0xffff0000, AX
	VMOVQ AX, X10
	VPBROADCASTD X10, Y10          // the upper half
	MOVL $0x7fffffff, AX
	VMOVQ AX, X11
	VPBROADCASTD X11, Y11          // all but the sign
	MOVL $0x7f800000, AX
	VMOVQ AX, X12
	VPBROADCASTD X12, Y12          // the exponent, and +Inf
	MOVL $0x00400000, AX
	VMOVQ AX, X13
	VPBROADCASTD X13, Y13          // the quiet bit
	VPXOR Y14, Y14, Y14            // 0

loop:
	VMOVDQU   (SI), Y0
	VPSRLD    $16, Y0, Y1
	VPAND     Y8, Y1, Y1
	VPADDD    Y9, Y1, Y1
	VPADDD    Y0, Y1, Y1
	VPAND     Y10, Y1, Y1          // rounded to nearest, ties to even
	VPAND     Y11, Y0, Y2
	VPCMPGTD  Y12, Y2, Y3          // NaN: |b| > +Inf
	VPOR      Y13, Y0, Y4
	VPAND     Y10, Y4, Y4
	VPBLENDVB Y3, Y4, Y1, Y1
	VPAND     Y12, Y0, Y5
	VPCMPEQD  Y14, Y5, Y5          // zero or subnormal
	VPANDN    Y0, Y11, Y6          // the sign alone
	VPBLENDVB Y5, Y6, Y1, Y1
	VMOVDQU   Y1, (DI)
	ADDQ      $32, SI
	ADDQ      $32, DI
	DECQ      CX
	JNZ       loop

done:
	VZEROUPPER
	RET
