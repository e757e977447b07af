#include "textflag.h"

// The AVX-512 micro-kernels keep a 12×32 (float32) or 12×16 (float64) tile
// of C in Z8-Z31, two registers per row. Each step of the k loop loads one
// row of the packed B panel into Z0 and Z1, broadcasts the twelve values of
// the packed A column in turn into Z2, and does 24 fused multiply-adds.
//
// Arguments: k in CX, A in SI, B in DI, C in DX, ldc in bytes in R8.

// ROW does one k step for one row of the tile, whose A value is at offset o
// from SI, into accumulators c0 and c1.
#define ROW(BCAST, FMA, o, c0, c1) \
	BCAST o(SI), Z2; \
	FMA Z0, Z2, c0; \
	FMA Z1, Z2, c1

// STEP does one k step for the whole tile; S is the element size in bytes.
#define STEP(BCAST, FMA, S) \
	VMOVUPS (DI), Z0; \
	VMOVUPS 64(DI), Z1; \
	ROW(BCAST, FMA, 0*S, Z8, Z9); \
	ROW(BCAST, FMA, 1*S, Z10, Z11); \
	ROW(BCAST, FMA, 2*S, Z12, Z13); \
	ROW(BCAST, FMA, 3*S, Z14, Z15); \
	ROW(BCAST, FMA, 4*S, Z16, Z17); \
	ROW(BCAST, FMA, 5*S, Z18, Z19); \
	ROW(BCAST, FMA, 6*S, Z20, Z21); \
	ROW(BCAST, FMA, 7*S, Z22, Z23); \
	ROW(BCAST, FMA, 8*S, Z24, Z25); \
	ROW(BCAST, FMA, 9*S, Z26, Z27); \
	ROW(BCAST, FMA, 10*S, Z28, Z29); \
	ROW(BCAST, FMA, 11*S, Z30, Z31); \
	ADDQ $(12*S), SI; \
	ADDQ $128, DI

#define LOAD_ARGS(shift) \
	MOVQ k+0(FP), CX; \
	MOVQ a+8(FP), SI; \
	MOVQ b+16(FP), DI; \
	MOVQ c+24(FP), DX; \
	MOVQ ldc+32(FP), R8; \
	SHLQ $shift, R8

// PREFETCH_C asks for the 12 rows of the C tile, 128 bytes each, to be
// brought into L1 while the k loop runs.
#define PREFETCH_ROW \
	PREFETCHT0 (AX); \
	PREFETCHT0 64(AX); \
	PREFETCHT0 127(AX); \
	ADDQ R8, AX

#define PREFETCH_C \
	MOVQ DX, AX; \
	PREFETCH_ROW; PREFETCH_ROW; PREFETCH_ROW; PREFETCH_ROW; \
	PREFETCH_ROW; PREFETCH_ROW; PREFETCH_ROW; PREFETCH_ROW; \
	PREFETCH_ROW; PREFETCH_ROW; PREFETCH_ROW; PREFETCH_ROW

#define ZERO2(c0, c1) \
	VPXORD c0, c0, c0; \
	VPXORD c1, c1, c1

#define ZERO_TILE \
	ZERO2(Z8, Z9); \
	ZERO2(Z10, Z11); \
	ZERO2(Z12, Z13); \
	ZERO2(Z14, Z15); \
	ZERO2(Z16, Z17); \
	ZERO2(Z18, Z19); \
	ZERO2(Z20, Z21); \
	ZERO2(Z22, Z23); \
	ZERO2(Z24, Z25); \
	ZERO2(Z26, Z27); \
	ZERO2(Z28, Z29); \
	ZERO2(Z30, Z31)

// ADD_ROW adds one row of C at DX to c0 and c1 with ADD (VADDPS or VADDPD).
#define ADD_ROW(ADD, c0, c1) \
	ADD (DX), c0, c0; \
	ADD 64(DX), c1, c1; \
	STORE_ROW(c0, c1)

// STORE_ROW stores c0 and c1 as one row of C at DX and moves DX to the next.
#define STORE_ROW(c0, c1) \
	VMOVUPS c0, (DX); \
	VMOVUPS c1, 64(DX); \
	ADDQ R8, DX

// STORE_TILE writes the tile to C, adding it to C when accumulate is set.
#define STORE_TILE(ADD) \
	MOVBQZX accumulate+40(FP), AX; \
	TESTQ AX, AX; \
	JZ store; \
	ADD_ROW(ADD, Z8, Z9); \
	ADD_ROW(ADD, Z10, Z11); \
	ADD_ROW(ADD, Z12, Z13); \
	ADD_ROW(ADD, Z14, Z15); \
	ADD_ROW(ADD, Z16, Z17); \
	ADD_ROW(ADD, Z18, Z19); \
	ADD_ROW(ADD, Z20, Z21); \
	ADD_ROW(ADD, Z22, Z23); \
	ADD_ROW(ADD, Z24, Z25); \
	ADD_ROW(ADD, Z26, Z27); \
	ADD_ROW(ADD, Z28, Z29); \
	ADD_ROW(ADD, Z30, Z31); \
	VZEROUPPER; \
	RET; \
store: \
	STORE_ROW(Z8, Z9); \
	STORE_ROW(Z10, Z11); \
	STORE_ROW(Z12, Z13); \
	STORE_ROW(Z14, Z15); \
	STORE_ROW(Z16, Z17); \
	STORE_ROW(Z18, Z19); \
	STORE_ROW(Z20, Z21); \
	STORE_ROW(Z22, Z23); \
	STORE_ROW(Z24, Z25); \
	STORE_ROW(Z26, Z27); \
	STORE_ROW(Z28, Z29); \
	STORE_ROW(Z30, Z31); \
	VZEROUPPER; \
	RET

// The float32 kernels finish the tile in the registers before they store
// it, as Epilogue.Apply would after them, one step at a time: C added
// (accumulate), then the bias (bias non-nil: 32 values, one per column),
// then ReLU (relu), which clears every value whose sign bit is set
// (VPMAXSD against 0 on the bits, as vrow.ReLU does).

#define ACC_ROW(c0, c1) \
	VADDPS (BX), c0, c0; \
	VADDPS 64(BX), c1, c1; \
	ADDQ   R8, BX

#define BIAS_ROW(c0, c1) \
	VADDPS Z0, c0, c0; \
	VADDPS Z1, c1, c1

#define RELU_ROW(c0, c1) \
	VPMAXSD Z2, c0, c0; \
	VPMAXSD Z2, c1, c1

#define ROWS8(OP) \
	OP(Z8, Z9); OP(Z10, Z11); OP(Z12, Z13); OP(Z14, Z15); \
	OP(Z16, Z17); OP(Z18, Z19); OP(Z20, Z21); OP(Z22, Z23)

#define ROWS(OP) \
	ROWS8(OP); \
	OP(Z24, Z25); OP(Z26, Z27); OP(Z28, Z29); OP(Z30, Z31)

// EPILOGUE finishes and stores the tile, the rows that ROWSOP (ROWS or
// ROWS8) names; the kernel's arguments are k, a, b, c, ldc, accumulate,
// bias and relu.
#define EPILOGUE(ROWSOP) \
	MOVBQZX accumulate+40(FP), AX; \
	TESTQ   AX, AX; \
	JZ      added; \
	MOVQ    DX, BX; \
	ROWSOP(ACC_ROW); \
added: \
	MOVQ    bias+48(FP), AX; \
	TESTQ   AX, AX; \
	JZ      biased; \
	VMOVUPS (AX), Z0; \
	VMOVUPS 64(AX), Z1; \
	ROWSOP(BIAS_ROW); \
biased: \
	MOVBQZX relu+56(FP), AX; \
	TESTQ   AX, AX; \
	JZ      rectified; \
	VPXORD  Z2, Z2, Z2; \
	ROWSOP(RELU_ROW); \
rectified: \
	ROWSOP(STORE_ROW); \
	VZEROUPPER; \
	RET

// func sgemmKernel12x32(k int, a, b, c *float32, ldc int, accumulate bool, bias *float32, relu bool)
TEXT ·sgemmKernel12x32(SB), NOSPLIT, $0-57
	LOAD_ARGS(2)
	PREFETCH_C
	ZERO_TILE

loop:
	STEP(VBROADCASTSS, VFMADD231PS, 4)
	DECQ CX
	JNZ  loop

	EPILOGUE(ROWS)

// func dgemmKernel12x16(k int, a, b, c *float64, ldc int, accumulate bool)
TEXT ·dgemmKernel12x16(SB), NOSPLIT, $0-41
	LOAD_ARGS(3)
	PREFETCH_C
	ZERO_TILE

loop:
	STEP(VBROADCASTSD, VFMADD231PD, 8)
	DECQ CX
	JNZ  loop

	STORE_TILE(VADDPD)

// The bfloat16 micro-kernel (AVX512_BF16) keeps a 12×32 float32 tile of C in
// Z8-Z31, as the float32 one does. Each step of its k loop takes one pair of
// the inner dimension: it loads one slot row of the packed B panel (32
// columns, a bfloat16 pair each) into Z0 and Z1, broadcasts each row's pair
// of the packed A panel into Z2, and does 24 VDPBF16PS, each two
// multiply-adds per lane.
//
// Go's assembler knows none of the AVX512_BF16 instructions, so they are
// written as their bytes: EVEX.512.F3.0F38.W0 52 /r for VDPBF16PS,
// EVEX.512.F2.0F38.W0 72 /r for VCVTNE2PS2BF16 and EVEX.512.F3.0F38.W0 72 /r
// for VCVTNEPS2BF16, register operands only. The comments give them in
// Intel's operand order (destination first). bf16_amd64_test.go checks them
// against a scalar reference.

// The steps of the bfloat16 kernels' k loop: BF16_B loads a slot row of the
// packed B panel into Z0 and Z1; BF16_ROWS8 and BF16_ROWS4, for rows 0-7
// and 8-11 of the tile, broadcast the row's pair of A from its address
// into Z2 and do two VDPBF16PS each.
#define BF16_B \
	VMOVUPS (DI), Z0; \
	VMOVUPS 64(DI), Z1

#define BF16_ROWS8(a0, a1, a2, a3, a4, a5, a6, a7) \
	VPBROADCASTD a0, Z2; \
	BYTE $0x62; BYTE $0x72; BYTE $0x6E; BYTE $0x48; BYTE $0x52; BYTE $0xC0 /* VDPBF16PS Z8, Z2, Z0 */; \
	BYTE $0x62; BYTE $0x72; BYTE $0x6E; BYTE $0x48; BYTE $0x52; BYTE $0xC9 /* VDPBF16PS Z9, Z2, Z1 */; \
	VPBROADCASTD a1, Z2; \
	BYTE $0x62; BYTE $0x72; BYTE $0x6E; BYTE $0x48; BYTE $0x52; BYTE $0xD0 /* VDPBF16PS Z10, Z2, Z0 */; \
	BYTE $0x62; BYTE $0x72; BYTE $0x6E; BYTE $0x48; BYTE $0x52; BYTE $0xD9 /* VDPBF16PS Z11, Z2, Z1 */; \
	VPBROADCASTD a2, Z2; \
	BYTE $0x62; BYTE $0x72; BYTE $0x6E; BYTE $0x48; BYTE $0x52; BYTE $0xE0 /* VDPBF16PS Z12, Z2, Z0 */; \
	BYTE $0x62; BYTE $0x72; BYTE $0x6E; BYTE $0x48; BYTE $0x52; BYTE $0xE9 /* VDPBF16PS Z13, Z2, Z1 */; \
	VPBROADCASTD a3, Z2; \
	BYTE $0x62; BYTE $0x72; BYTE $0x6E; BYTE $0x48; BYTE $0x52; BYTE $0xF0 /* VDPBF16PS Z14, Z2, Z0 */; \
	BYTE $0x62; BYTE $0x72; BYTE $0x6E; BYTE $0x48; BYTE $0x52; BYTE $0xF9 /* VDPBF16PS Z15, Z2, Z1 */; \
	VPBROADCASTD a4, Z2; \
	BYTE $0x62; BYTE $0xE2; BYTE $0x6E; BYTE $0x48; BYTE $0x52; BYTE $0xC0 /* VDPBF16PS Z16, Z2, Z0 */; \
	BYTE $0x62; BYTE $0xE2; BYTE $0x6E; BYTE $0x48; BYTE $0x52; BYTE $0xC9 /* VDPBF16PS Z17, Z2, Z1 */; \
	VPBROADCASTD a5, Z2; \
	BYTE $0x62; BYTE $0xE2; BYTE $0x6E; BYTE $0x48; BYTE $0x52; BYTE $0xD0 /* VDPBF16PS Z18, Z2, Z0 */; \
	BYTE $0x62; BYTE $0xE2; BYTE $0x6E; BYTE $0x48; BYTE $0x52; BYTE $0xD9 /* VDPBF16PS Z19, Z2, Z1 */; \
	VPBROADCASTD a6, Z2; \
	BYTE $0x62; BYTE $0xE2; BYTE $0x6E; BYTE $0x48; BYTE $0x52; BYTE $0xE0 /* VDPBF16PS Z20, Z2, Z0 */; \
	BYTE $0x62; BYTE $0xE2; BYTE $0x6E; BYTE $0x48; BYTE $0x52; BYTE $0xE9 /* VDPBF16PS Z21, Z2, Z1 */; \
	VPBROADCASTD a7, Z2; \
	BYTE $0x62; BYTE $0xE2; BYTE $0x6E; BYTE $0x48; BYTE $0x52; BYTE $0xF0 /* VDPBF16PS Z22, Z2, Z0 */; \
	BYTE $0x62; BYTE $0xE2; BYTE $0x6E; BYTE $0x48; BYTE $0x52; BYTE $0xF9 /* VDPBF16PS Z23, Z2, Z1 */

#define BF16_ROWS4(b0, b1, b2, b3) \
	VPBROADCASTD b0, Z2; \
	BYTE $0x62; BYTE $0x62; BYTE $0x6E; BYTE $0x48; BYTE $0x52; BYTE $0xC0 /* VDPBF16PS Z24, Z2, Z0 */; \
	BYTE $0x62; BYTE $0x62; BYTE $0x6E; BYTE $0x48; BYTE $0x52; BYTE $0xC9 /* VDPBF16PS Z25, Z2, Z1 */; \
	VPBROADCASTD b1, Z2; \
	BYTE $0x62; BYTE $0x62; BYTE $0x6E; BYTE $0x48; BYTE $0x52; BYTE $0xD0 /* VDPBF16PS Z26, Z2, Z0 */; \
	BYTE $0x62; BYTE $0x62; BYTE $0x6E; BYTE $0x48; BYTE $0x52; BYTE $0xD9 /* VDPBF16PS Z27, Z2, Z1 */; \
	VPBROADCASTD b2, Z2; \
	BYTE $0x62; BYTE $0x62; BYTE $0x6E; BYTE $0x48; BYTE $0x52; BYTE $0xE0 /* VDPBF16PS Z28, Z2, Z0 */; \
	BYTE $0x62; BYTE $0x62; BYTE $0x6E; BYTE $0x48; BYTE $0x52; BYTE $0xE9 /* VDPBF16PS Z29, Z2, Z1 */; \
	VPBROADCASTD b3, Z2; \
	BYTE $0x62; BYTE $0x62; BYTE $0x6E; BYTE $0x48; BYTE $0x52; BYTE $0xF0 /* VDPBF16PS Z30, Z2, Z0 */; \
	BYTE $0x62; BYTE $0x62; BYTE $0x6E; BYTE $0x48; BYTE $0x52; BYTE $0xF9 /* VDPBF16PS Z31, Z2, Z1 */

// func bf16Kernel12x32(k int, a, b, c *float32, ldc int, accumulate bool, bias *float32, relu bool)
TEXT ·bf16Kernel12x32(SB), NOSPLIT, $0-57
	LOAD_ARGS(2)
	PREFETCH_C
	ZERO_TILE

loop:
	BF16_B
	BF16_ROWS8(0(SI), 4(SI), 8(SI), 12(SI), 16(SI), 20(SI), 24(SI), 28(SI))
	BF16_ROWS4(32(SI), 36(SI), 40(SI), 44(SI))
	ADDQ $48, SI
	ADDQ $128, DI
	DECQ CX
	JNZ  loop

	EPILOGUE(ROWS)

// ROW_BASES sets R9 to a row of a panel laid out by rows (4·k bytes, k in
// CX) and R10 and R11 to its rows 3 and 6 (SI the first): with R9 as the
// index, they address rows 0-8.
#define ROW_BASES \
	MOVQ CX, R9; \
	SHLQ $2, R9; \
	LEAQ (SI)(R9*2), R10; \
	ADDQ R9, R10; \
	LEAQ (R10)(R9*2), R11; \
	ADDQ R9, R11

// func bf16Kernel12x32Rows(k int, a, b, c *float32, ldc int, accumulate bool, bias *float32, relu bool)
//
// bf16Kernel12x32 on an A panel laid out by rows (rowPanels): row r's k
// pairs one after the other, 4·k·r bytes from the first.
TEXT ·bf16Kernel12x32Rows(SB), NOSPLIT, $0-57
	LOAD_ARGS(2)
	PREFETCH_C
	ZERO_TILE
	ROW_BASES
	LEAQ (R11)(R9*2), R12
	ADDQ R9, R12            // row 9

rows:
	BF16_B
	BF16_ROWS8((SI), (SI)(R9*1), (SI)(R9*2), (R10), (R10)(R9*1), (R10)(R9*2), (R11), (R11)(R9*1))
	BF16_ROWS4((R11)(R9*2), (R12), (R12)(R9*1), (R12)(R9*2))
	ADDQ $4, SI
	ADDQ $4, R10
	ADDQ $4, R11
	ADDQ $4, R12
	ADDQ $128, DI
	DECQ CX
	JNZ  rows

	EPILOGUE(ROWS)

// func bf16Kernel8x32(k int, a, b, c *float32, ldc int, accumulate bool, bias *float32, relu bool)
//
// bf16Kernel12x32 on the first 8 rows of the panel alone: the last panel
// of a block whose rows leave 8 or fewer for it.
TEXT ·bf16Kernel8x32(SB), NOSPLIT, $0-57
	LOAD_ARGS(2)
	PREFETCH_C
	ZERO_TILE

loop:
	BF16_B
	BF16_ROWS8(0(SI), 4(SI), 8(SI), 12(SI), 16(SI), 20(SI), 24(SI), 28(SI))
	ADDQ $48, SI
	ADDQ $128, DI
	DECQ CX
	JNZ  loop

	EPILOGUE(ROWS8)

// func bf16Kernel8x32Rows(k int, a, b, c *float32, ldc int, accumulate bool, bias *float32, relu bool)
//
// bf16Kernel8x32 on a panel laid out by rows (rowPanels).
TEXT ·bf16Kernel8x32Rows(SB), NOSPLIT, $0-57
	LOAD_ARGS(2)
	PREFETCH_C
	ZERO_TILE
	ROW_BASES

rows:
	BF16_B
	BF16_ROWS8((SI), (SI)(R9*1), (SI)(R9*2), (R10), (R10)(R9*1), (R10)(R9*2), (R11), (R11)(R9*1))
	ADDQ $4, SI
	ADDQ $4, R10
	ADDQ $4, R11
	ADDQ $128, DI
	DECQ CX
	JNZ  rows

	EPILOGUE(ROWS8)
