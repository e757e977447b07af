#include "textflag.h"

// func transpose4x8(dst *float32, w int, src *float32, ld int, n int)
//
// For each of n blocks of 4 rows × 8 columns of src, moving 8 columns right
// each time, writes the block's 8 columns as rows of 4 values at dst, dst+w,
// …, dst+7w: one unpack and one shuffle stage turn the rows in Y0-Y3 into
// the columns 0|4, 1|5, 2|6 and 3|7 in the two halves of Y0-Y3.
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
	VMOVUPS      (SI), Y0
	VMOVUPS      (SI)(R9*1), Y1
	VMOVUPS      (SI)(R9*2), Y2
	VMOVUPS      (SI)(R10*1), Y3
	VUNPCKLPS    Y1, Y0, Y4
	VUNPCKHPS    Y1, Y0, Y5
	VUNPCKLPS    Y3, Y2, Y6
	VUNPCKHPS    Y3, Y2, Y7
	VSHUFPS      $0x44, Y6, Y4, Y0
	VSHUFPS      $0xEE, Y6, Y4, Y1
	VSHUFPS      $0x44, Y7, Y5, Y2
	VSHUFPS      $0xEE, Y7, Y5, Y3
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
