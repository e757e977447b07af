#include "textflag.h"

// The micro-kernels keep the 6×16 (float32) or 6×8 (float64) tile of C in
// Y4-Y15, two registers per row. Each step of the k loop loads one row of the
// packed B panel into Y0 and Y1, broadcasts the six values of the packed A
// column in turn into Y2 and Y3, and does twelve fused multiply-adds.
//
// Arguments: k in CX, A in SI, B in DI, C in DX, ldc in bytes in R8.

#define LOAD_ARGS(shift) \
	MOVQ k+0(FP), CX; \
	MOVQ a+8(FP), SI; \
	MOVQ b+16(FP), DI; \
	MOVQ c+24(FP), DX; \
	MOVQ ldc+32(FP), R8; \
	SHLQ $shift, R8

#define ZERO_TILE \
	VXORPS Y4, Y4, Y4; \
	VXORPS Y5, Y5, Y5; \
	VXORPS Y6, Y6, Y6; \
	VXORPS Y7, Y7, Y7; \
	VXORPS Y8, Y8, Y8; \
	VXORPS Y9, Y9, Y9; \
	VXORPS Y10, Y10, Y10; \
	VXORPS Y11, Y11, Y11; \
	VXORPS Y12, Y12, Y12; \
	VXORPS Y13, Y13, Y13; \
	VXORPS Y14, Y14, Y14; \
	VXORPS Y15, Y15, Y15

// STEP does one k step for two rows of the tile, whose A values are at
// offsets o0 and o1 from SI, into accumulators c00 c01 (row 0) c10 c11 (row 1).
#define STEP(BCAST, FMA, o0, o1, c00, c01, c10, c11) \
	BCAST o0(SI), Y2; \
	BCAST o1(SI), Y3; \
	FMA Y0, Y2, c00; \
	FMA Y1, Y2, c01; \
	FMA Y0, Y3, c10; \
	FMA Y1, Y3, c11

// ROW stores two accumulators as one row of C at DX, first adding C's old
// values with ADD when it is VADDPS/VADDPD, then moves DX to the next row.
#define ADD_ROW(ADD, c0, c1) \
	ADD (DX), c0, c0; \
	ADD 32(DX), c1, c1; \
	VMOVUPS c0, (DX); \
	VMOVUPS c1, 32(DX); \
	ADDQ R8, DX

#define STORE_ROW(c0, c1) \
	VMOVUPS c0, (DX); \
	VMOVUPS c1, 32(DX); \
	ADDQ R8, DX

// STORE_TILE writes the tile to C, adding it to C when accumulate is set.
#define STORE_TILE(ADD) \
	MOVBQZX accumulate+40(FP), AX; \
	TESTQ AX, AX; \
	JZ store; \
	ADD_ROW(ADD, Y4, Y5); \
	ADD_ROW(ADD, Y6, Y7); \
	ADD_ROW(ADD, Y8, Y9); \
	ADD_ROW(ADD, Y10, Y11); \
	ADD_ROW(ADD, Y12, Y13); \
	ADD_ROW(ADD, Y14, Y15); \
	VZEROUPPER; \
	RET; \
store: \
	STORE_ROW(Y4, Y5); \
	STORE_ROW(Y6, Y7); \
	STORE_ROW(Y8, Y9); \
	STORE_ROW(Y10, Y11); \
	STORE_ROW(Y12, Y13); \
	STORE_ROW(Y14, Y15); \
	VZEROUPPER; \
	RET

// func sgemmKernel6x16(k int, a, b, c *float32, ldc int, accumulate bool)
TEXT ·sgemmKernel6x16(SB), NOSPLIT, $0-41
	LOAD_ARGS(2)
	ZERO_TILE

loop:
	VMOVUPS (DI), Y0
	VMOVUPS 32(DI), Y1
	STEP(VBROADCASTSS, VFMADD231PS, 0, 4, Y4, Y5, Y6, Y7)
	STEP(VBROADCASTSS, VFMADD231PS, 8, 12, Y8, Y9, Y10, Y11)
	STEP(VBROADCASTSS, VFMADD231PS, 16, 20, Y12, Y13, Y14, Y15)
	ADDQ $24, SI
	ADDQ $64, DI
	DECQ CX
	JNZ  loop

	STORE_TILE(VADDPS)

// func dgemmKernel6x8(k int, a, b, c *float64, ldc int, accumulate bool)
TEXT ·dgemmKernel6x8(SB), NOSPLIT, $0-41
	LOAD_ARGS(3)
	ZERO_TILE

loop:
	VMOVUPD (DI), Y0
	VMOVUPD 32(DI), Y1
	STEP(VBROADCASTSD, VFMADD231PD, 0, 8, Y4, Y5, Y6, Y7)
	STEP(VBROADCASTSD, VFMADD231PD, 16, 24, Y8, Y9, Y10, Y11)
	STEP(VBROADCASTSD, VFMADD231PD, 32, 40, Y12, Y13, Y14, Y15)
	ADDQ $48, SI
	ADDQ $64, DI
	DECQ CX
	JNZ  loop

	STORE_TILE(VADDPD)
