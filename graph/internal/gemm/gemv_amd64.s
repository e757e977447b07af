#include "textflag.h"

// The matrix–vector kernels, with AVX2 and FMA, in float32 (PS, 8 values
// to a register) and float64 (PD, 4 values). They use Y0-Y9 and leave the
// edges (k or n not a multiple of their blocks) to Go.

// DOT_ARGS loads the arguments of the dot kernels: k in bytes in CX, x in
// SI, b in DI, ldb in bytes in R8, n in R9, y in DX, 3·ldb in R10 and in BX
// the bytes of x covered by steps of 64 bytes.
#define DOT_ARGS(SHIFT) \
	MOVQ k+0(FP), CX; \
	SHLQ $SHIFT, CX; \
	MOVQ x+8(FP), SI; \
	MOVQ b+16(FP), DI; \
	MOVQ ldb+24(FP), R8; \
	SHLQ $SHIFT, R8; \
	MOVQ n+32(FP), R9; \
	MOVQ y+40(FP), DX; \
	LEAQ (R8)(R8*2), R10; \
	MOVQ CX, BX; \
	ANDQ $-64, BX

// DOT4 computes the dot products of x with the four rows of b from DI,
// leaving each in a register (Y0-Y3) whose values sum to it: two
// accumulators per row (even and odd blocks of 32 bytes, Y0-Y3 and Y4-Y7)
// added at the end.
#define DOT4(XOR, MOVU, FMA, ADD) \
	XOR  Y0, Y0, Y0; \
	XOR  Y1, Y1, Y1; \
	XOR  Y2, Y2, Y2; \
	XOR  Y3, Y3, Y3; \
	XOR  Y4, Y4, Y4; \
	XOR  Y5, Y5, Y5; \
	XOR  Y6, Y6, Y6; \
	XOR  Y7, Y7, Y7; \
	LEAQ (DI)(R8*1), R11; \
	LEAQ (DI)(R8*2), R12; \
	LEAQ (DI)(R10*1), R13; \
	XORQ AX, AX; \
loop4: \
	CMPQ AX, BX; \
	JGE  tail4; \
	MOVU (SI)(AX*1), Y8; \
	MOVU 32(SI)(AX*1), Y9; \
	FMA  (DI)(AX*1), Y8, Y0; \
	FMA  32(DI)(AX*1), Y9, Y4; \
	FMA  (R11)(AX*1), Y8, Y1; \
	FMA  32(R11)(AX*1), Y9, Y5; \
	FMA  (R12)(AX*1), Y8, Y2; \
	FMA  32(R12)(AX*1), Y9, Y6; \
	FMA  (R13)(AX*1), Y8, Y3; \
	FMA  32(R13)(AX*1), Y9, Y7; \
	ADDQ $64, AX; \
	JMP  loop4; \
tail4: \
	CMPQ AX, CX; \
	JGE  sum4; \
	MOVU (SI)(AX*1), Y8; \
	FMA  (DI)(AX*1), Y8, Y0; \
	FMA  (R11)(AX*1), Y8, Y1; \
	FMA  (R12)(AX*1), Y8, Y2; \
	FMA  (R13)(AX*1), Y8, Y3; \
sum4: \
	ADD  Y4, Y0, Y0; \
	ADD  Y5, Y1, Y1; \
	ADD  Y6, Y2, Y2; \
	ADD  Y7, Y3, Y3

// func sdotRows(k int, x, b *float32, ldb, n int, y *float32)
//
// y[j] = Σ_{p<k} x[p]·b[j·ldb+p] for j < n; k is a positive multiple of 8.
// Four rows of b at a time, then one.
TEXT ·sdotRows(SB), NOSPLIT, $0-48
	DOT_ARGS(2)

four:
	CMPQ         R9, $4
	JLT          one
	DOT4(VXORPS, VMOVUPS, VFMADD231PS, VADDPS)
	VHADDPS      Y1, Y0, Y0    // a01 a23 b01 b23 | a45 a67 b45 b67
	VHADDPS      Y3, Y2, Y2    // c01 c23 d01 d23 | c45 c67 d45 d67
	VHADDPS      Y2, Y0, Y0    // a0-3 b0-3 c0-3 d0-3 | a4-7 b4-7 c4-7 d4-7
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VMOVUPS      X0, (DX)
	ADDQ         $16, DX
	LEAQ         (DI)(R8*4), DI
	SUBQ         $4, R9
	JMP          four

one:
	TESTQ  R9, R9
	JZ     done
	VXORPS Y0, Y0, Y0
	VXORPS Y4, Y4, Y4
	XORQ   AX, AX

loop1:
	CMPQ        AX, BX
	JGE         tail1
	VMOVUPS     (SI)(AX*1), Y8
	VMOVUPS     32(SI)(AX*1), Y9
	VFMADD231PS (DI)(AX*1), Y8, Y0
	VFMADD231PS 32(DI)(AX*1), Y9, Y4
	ADDQ        $64, AX
	JMP         loop1

tail1:
	CMPQ        AX, CX
	JGE         sum1
	VMOVUPS     (SI)(AX*1), Y8
	VFMADD231PS (DI)(AX*1), Y8, Y0

sum1:
	VADDPS       Y4, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	VMOVSS       X0, (DX)
	ADDQ         $4, DX
	ADDQ         R8, DI
	DECQ         R9
	JMP          one

done:
	VZEROUPPER
	RET

// func ddotRows(k int, x, b *float64, ldb, n int, y *float64)
//
// sdotRows for float64: k is a positive multiple of 4, n of 4.
TEXT ·ddotRows(SB), NOSPLIT, $0-48
	DOT_ARGS(3)

four:
	CMPQ       R9, $4
	JLT        done
	DOT4(VXORPD, VMOVUPD, VFMADD231PD, VADDPD)
	VHADDPD    Y1, Y0, Y0        // a01 b01 a23 b23
	VHADDPD    Y3, Y2, Y2        // c01 d01 c23 d23
	VPERM2F128 $0x20, Y2, Y0, Y4 // a01 b01 c01 d01
	VPERM2F128 $0x31, Y2, Y0, Y5 // a23 b23 c23 d23
	VADDPD     Y5, Y4, Y4
	VMOVUPD    Y4, (DX)
	ADDQ       $32, DX
	LEAQ       (DI)(R8*4), DI
	SUBQ       $4, R9
	JMP        four

done:
	VZEROUPPER
	RET

// AXPY computes y[j] = Σ_{p<k} x[p]·b[p·ldb+j] for j < n, k ≥ 1: 128 bytes
// of columns at a time (four registers, WIDE columns), then 32 (one
// register, NARROW columns); n is a multiple of NARROW. Rows p of even and
// odd p accumulate into separate registers (Y0-Y3 and Y4-Y7), added at
// the end. SIZE is the size of an element, 1<<SHIFT.
#define AXPY(SHIFT, SIZE, WIDE, NARROW, XOR, BCAST, FMA, ADD, MOVU) \
	MOVQ  k+0(FP), CX; \
	MOVQ  x+8(FP), SI; \
	MOVQ  b+16(FP), DI; \
	MOVQ  ldb+24(FP), R8; \
	SHLQ  $SHIFT, R8; \
	MOVQ  n+32(FP), R9; \
	MOVQ  y+40(FP), DX; \
wide: \
	CMPQ  R9, $WIDE; \
	JLT   narrow; \
	XOR   Y0, Y0, Y0; \
	XOR   Y1, Y1, Y1; \
	XOR   Y2, Y2, Y2; \
	XOR   Y3, Y3, Y3; \
	XOR   Y4, Y4, Y4; \
	XOR   Y5, Y5, Y5; \
	XOR   Y6, Y6, Y6; \
	XOR   Y7, Y7, Y7; \
	MOVQ  DI, R11; \
	MOVQ  SI, R12; \
	MOVQ  CX, R13; \
pairsWide: \
	CMPQ  R13, $2; \
	JLT   lastWide; \
	BCAST (R12), Y8; \
	BCAST SIZE(R12), Y9; \
	LEAQ  (R11)(R8*1), AX; \
	FMA   (R11), Y8, Y0; \
	FMA   32(R11), Y8, Y1; \
	FMA   64(R11), Y8, Y2; \
	FMA   96(R11), Y8, Y3; \
	FMA   (AX), Y9, Y4; \
	FMA   32(AX), Y9, Y5; \
	FMA   64(AX), Y9, Y6; \
	FMA   96(AX), Y9, Y7; \
	LEAQ  (R11)(R8*2), R11; \
	ADDQ  $(2*SIZE), R12; \
	SUBQ  $2, R13; \
	JMP   pairsWide; \
lastWide: \
	TESTQ R13, R13; \
	JZ    storeWide; \
	BCAST (R12), Y8; \
	FMA   (R11), Y8, Y0; \
	FMA   32(R11), Y8, Y1; \
	FMA   64(R11), Y8, Y2; \
	FMA   96(R11), Y8, Y3; \
storeWide: \
	ADD   Y4, Y0, Y0; \
	ADD   Y5, Y1, Y1; \
	ADD   Y6, Y2, Y2; \
	ADD   Y7, Y3, Y3; \
	MOVU  Y0, (DX); \
	MOVU  Y1, 32(DX); \
	MOVU  Y2, 64(DX); \
	MOVU  Y3, 96(DX); \
	ADDQ  $128, DX; \
	ADDQ  $128, DI; \
	SUBQ  $WIDE, R9; \
	JMP   wide; \
narrow: \
	TESTQ R9, R9; \
	JZ    done; \
	XOR   Y0, Y0, Y0; \
	XOR   Y4, Y4, Y4; \
	MOVQ  DI, R11; \
	MOVQ  SI, R12; \
	MOVQ  CX, R13; \
pairsNarrow: \
	CMPQ  R13, $2; \
	JLT   lastNarrow; \
	BCAST (R12), Y8; \
	BCAST SIZE(R12), Y9; \
	FMA   (R11), Y8, Y0; \
	FMA   (R11)(R8*1), Y9, Y4; \
	LEAQ  (R11)(R8*2), R11; \
	ADDQ  $(2*SIZE), R12; \
	SUBQ  $2, R13; \
	JMP   pairsNarrow; \
lastNarrow: \
	TESTQ R13, R13; \
	JZ    storeNarrow; \
	BCAST (R12), Y8; \
	FMA   (R11), Y8, Y0; \
storeNarrow: \
	ADD   Y4, Y0, Y0; \
	MOVU  Y0, (DX); \
	ADDQ  $32, DX; \
	ADDQ  $32, DI; \
	SUBQ  $NARROW, R9; \
	JMP   narrow; \
done: \
	VZEROUPPER; \
	RET

// func saxpyCols(k int, x, b *float32, ldb, n int, y *float32)
//
// y[j] = Σ_{p<k} x[p]·b[p·ldb+j] for j < n; k ≥ 1 and n is a multiple of 8.
TEXT ·saxpyCols(SB), NOSPLIT, $0-48
	AXPY(2, 4, 32, 8, VXORPS, VBROADCASTSS, VFMADD231PS, VADDPS, VMOVUPS)

// func daxpyCols(k int, x, b *float64, ldb, n int, y *float64)
//
// saxpyCols for float64: n is a multiple of 4.
TEXT ·daxpyCols(SB), NOSPLIT, $0-48
	AXPY(3, 8, 16, 4, VXORPD, VBROADCASTSD, VFMADD231PD, VADDPD, VMOVUPD)
