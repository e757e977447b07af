#include "textflag.h"

// The matrix–vector kernels for float32, with AVX2 and FMA. They use
// Y0-Y9 and leave the edges (k or n not a multiple of 8) to Go.

// func sdotRows(k8 int, x, b *float32, ldb, n int, y *float32)
//
// y[j] = Σ_{p<k8} x[p]·b[j·ldb+p] for j < n; k8 is a positive multiple of 8.
// Four rows of b at a time: each has two accumulators (even and odd blocks
// of 8 values, Y0-Y3 and Y4-Y7), summed across at the end.
TEXT ·sdotRows(SB), NOSPLIT, $0-48
	MOVQ k8+0(FP), CX
	SHLQ $2, CX                // k8 in bytes
	MOVQ x+8(FP), SI
	MOVQ b+16(FP), DI
	MOVQ ldb+24(FP), R8
	SHLQ $2, R8                // ldb in bytes
	MOVQ n+32(FP), R9
	MOVQ y+40(FP), DX
	LEAQ (R8)(R8*2), R10       // 3·ldb
	MOVQ CX, BX
	ANDQ $-64, BX              // the bytes covered by steps of 16 values

four:
	CMPQ   R9, $4
	JLT    one
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	LEAQ   (DI)(R8*1), R11     // row 1
	LEAQ   (DI)(R8*2), R12     // row 2
	LEAQ   (DI)(R10*1), R13    // row 3
	XORQ   AX, AX

loop4:
	CMPQ        AX, BX
	JGE         tail4
	VMOVUPS     (SI)(AX*1), Y8
	VMOVUPS     32(SI)(AX*1), Y9
	VFMADD231PS (DI)(AX*1), Y8, Y0
	VFMADD231PS 32(DI)(AX*1), Y9, Y4
	VFMADD231PS (R11)(AX*1), Y8, Y1
	VFMADD231PS 32(R11)(AX*1), Y9, Y5
	VFMADD231PS (R12)(AX*1), Y8, Y2
	VFMADD231PS 32(R12)(AX*1), Y9, Y6
	VFMADD231PS (R13)(AX*1), Y8, Y3
	VFMADD231PS 32(R13)(AX*1), Y9, Y7
	ADDQ        $64, AX
	JMP         loop4

tail4:
	CMPQ        AX, CX
	JGE         sum4
	VMOVUPS     (SI)(AX*1), Y8
	VFMADD231PS (DI)(AX*1), Y8, Y0
	VFMADD231PS (R11)(AX*1), Y8, Y1
	VFMADD231PS (R12)(AX*1), Y8, Y2
	VFMADD231PS (R13)(AX*1), Y8, Y3

sum4:
	VADDPS       Y4, Y0, Y0
	VADDPS       Y5, Y1, Y1
	VADDPS       Y6, Y2, Y2
	VADDPS       Y7, Y3, Y3
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

// func saxpyCols(k int, x, b *float32, ldb, n8 int, y *float32)
//
// y[j] = Σ_{p<k} x[p]·b[p·ldb+j] for j < n8; k ≥ 1 and n8 is a multiple of
// 8. 32 columns at a time, then 8: rows p of even and odd p accumulate
// into separate registers (Y0-Y3 and Y4-Y7), added at the end.
TEXT ·saxpyCols(SB), NOSPLIT, $0-48
	MOVQ k+0(FP), CX
	MOVQ x+8(FP), SI
	MOVQ b+16(FP), DI
	MOVQ ldb+24(FP), R8
	SHLQ $2, R8                // ldb in bytes
	MOVQ n8+32(FP), R9
	MOVQ y+40(FP), DX

cols32:
	CMPQ   R9, $32
	JLT    cols8
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	MOVQ   DI, R11             // row p of b
	MOVQ   SI, R12             // x[p]
	MOVQ   CX, R13             // rows left

pairs32:
	CMPQ         R13, $2
	JLT          last32
	VBROADCASTSS (R12), Y8
	VBROADCASTSS 4(R12), Y9
	LEAQ         (R11)(R8*1), AX
	VFMADD231PS  (R11), Y8, Y0
	VFMADD231PS  32(R11), Y8, Y1
	VFMADD231PS  64(R11), Y8, Y2
	VFMADD231PS  96(R11), Y8, Y3
	VFMADD231PS  (AX), Y9, Y4
	VFMADD231PS  32(AX), Y9, Y5
	VFMADD231PS  64(AX), Y9, Y6
	VFMADD231PS  96(AX), Y9, Y7
	LEAQ         (R11)(R8*2), R11
	ADDQ         $8, R12
	SUBQ         $2, R13
	JMP          pairs32

last32:
	TESTQ        R13, R13
	JZ           store32
	VBROADCASTSS (R12), Y8
	VFMADD231PS  (R11), Y8, Y0
	VFMADD231PS  32(R11), Y8, Y1
	VFMADD231PS  64(R11), Y8, Y2
	VFMADD231PS  96(R11), Y8, Y3

store32:
	VADDPS  Y4, Y0, Y0
	VADDPS  Y5, Y1, Y1
	VADDPS  Y6, Y2, Y2
	VADDPS  Y7, Y3, Y3
	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	VMOVUPS Y2, 64(DX)
	VMOVUPS Y3, 96(DX)
	ADDQ    $128, DX
	ADDQ    $128, DI
	SUBQ    $32, R9
	JMP     cols32

cols8:
	TESTQ  R9, R9
	JZ     done
	VXORPS Y0, Y0, Y0
	VXORPS Y4, Y4, Y4
	MOVQ   DI, R11
	MOVQ   SI, R12
	MOVQ   CX, R13

pairs8:
	CMPQ         R13, $2
	JLT          last8
	VBROADCASTSS (R12), Y8
	VBROADCASTSS 4(R12), Y9
	VFMADD231PS  (R11), Y8, Y0
	VFMADD231PS  (R11)(R8*1), Y9, Y4
	LEAQ         (R11)(R8*2), R11
	ADDQ         $8, R12
	SUBQ         $2, R13
	JMP          pairs8

last8:
	TESTQ        R13, R13
	JZ           store8
	VBROADCASTSS (R12), Y8
	VFMADD231PS  (R11), Y8, Y0

store8:
	VADDPS  Y4, Y0, Y0
	VMOVUPS Y0, (DX)
	ADDQ    $32, DX
	ADDQ    $32, DI
	SUBQ    $8, R9
	JMP     cols8

done:
	VZEROUPPER
	RET

// func ddotRows(k4 int, x, b *float64, ldb, n int, y *float64)
//
// sdotRows for float64: y[j] = Σ_{p<k4} x[p]·b[j·ldb+p] for j < n; k4 is a
// positive multiple of 4.
TEXT ·ddotRows(SB), NOSPLIT, $0-48
	MOVQ k4+0(FP), CX
	SHLQ $3, CX                // k4 in bytes
	MOVQ x+8(FP), SI
	MOVQ b+16(FP), DI
	MOVQ ldb+24(FP), R8
	SHLQ $3, R8                // ldb in bytes
	MOVQ n+32(FP), R9
	MOVQ y+40(FP), DX
	LEAQ (R8)(R8*2), R10       // 3·ldb
	MOVQ CX, BX
	ANDQ $-64, BX              // the bytes covered by steps of 8 values

dfour:
	CMPQ   R9, $4
	JLT    done
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	LEAQ   (DI)(R8*1), R11
	LEAQ   (DI)(R8*2), R12
	LEAQ   (DI)(R10*1), R13
	XORQ   AX, AX

dloop4:
	CMPQ        AX, BX
	JGE         dtail4
	VMOVUPD     (SI)(AX*1), Y8
	VMOVUPD     32(SI)(AX*1), Y9
	VFMADD231PD (DI)(AX*1), Y8, Y0
	VFMADD231PD 32(DI)(AX*1), Y9, Y4
	VFMADD231PD (R11)(AX*1), Y8, Y1
	VFMADD231PD 32(R11)(AX*1), Y9, Y5
	VFMADD231PD (R12)(AX*1), Y8, Y2
	VFMADD231PD 32(R12)(AX*1), Y9, Y6
	VFMADD231PD (R13)(AX*1), Y8, Y3
	VFMADD231PD 32(R13)(AX*1), Y9, Y7
	ADDQ        $64, AX
	JMP         dloop4

dtail4:
	CMPQ        AX, CX
	JGE         dsum4
	VMOVUPD     (SI)(AX*1), Y8
	VFMADD231PD (DI)(AX*1), Y8, Y0
	VFMADD231PD (R11)(AX*1), Y8, Y1
	VFMADD231PD (R12)(AX*1), Y8, Y2
	VFMADD231PD (R13)(AX*1), Y8, Y3

dsum4:
	VADDPD     Y4, Y0, Y0
	VADDPD     Y5, Y1, Y1
	VADDPD     Y6, Y2, Y2
	VADDPD     Y7, Y3, Y3
	VHADDPD    Y1, Y0, Y0      // a01 b01 a23 b23
	VHADDPD    Y3, Y2, Y2      // c01 d01 c23 d23
	VPERM2F128 $0x20, Y2, Y0, Y4 // a01 b01 c01 d01
	VPERM2F128 $0x31, Y2, Y0, Y5 // a23 b23 c23 d23
	VADDPD     Y5, Y4, Y4
	VMOVUPD    Y4, (DX)
	ADDQ       $32, DX
	LEAQ       (DI)(R8*4), DI
	SUBQ       $4, R9
	JMP        dfour

done:
	VZEROUPPER
	RET

// func daxpyCols(k int, x, b *float64, ldb, n4 int, y *float64)
//
// saxpyCols for float64: y[j] = Σ_{p<k} x[p]·b[p·ldb+j] for j < n4; k ≥ 1
// and n4 is a multiple of 4. 16 columns at a time, then 4.
TEXT ·daxpyCols(SB), NOSPLIT, $0-48
	MOVQ k+0(FP), CX
	MOVQ x+8(FP), SI
	MOVQ b+16(FP), DI
	MOVQ ldb+24(FP), R8
	SHLQ $3, R8                // ldb in bytes
	MOVQ n4+32(FP), R9
	MOVQ y+40(FP), DX

dcols16:
	CMPQ   R9, $16
	JLT    dcols4
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	MOVQ   DI, R11
	MOVQ   SI, R12
	MOVQ   CX, R13

dpairs16:
	CMPQ         R13, $2
	JLT          dlast16
	VBROADCASTSD (R12), Y8
	VBROADCASTSD 8(R12), Y9
	LEAQ         (R11)(R8*1), AX
	VFMADD231PD  (R11), Y8, Y0
	VFMADD231PD  32(R11), Y8, Y1
	VFMADD231PD  64(R11), Y8, Y2
	VFMADD231PD  96(R11), Y8, Y3
	VFMADD231PD  (AX), Y9, Y4
	VFMADD231PD  32(AX), Y9, Y5
	VFMADD231PD  64(AX), Y9, Y6
	VFMADD231PD  96(AX), Y9, Y7
	LEAQ         (R11)(R8*2), R11
	ADDQ         $16, R12
	SUBQ         $2, R13
	JMP          dpairs16

dlast16:
	TESTQ        R13, R13
	JZ           dstore16
	VBROADCASTSD (R12), Y8
	VFMADD231PD  (R11), Y8, Y0
	VFMADD231PD  32(R11), Y8, Y1
	VFMADD231PD  64(R11), Y8, Y2
	VFMADD231PD  96(R11), Y8, Y3

dstore16:
	VADDPD  Y4, Y0, Y0
	VADDPD  Y5, Y1, Y1
	VADDPD  Y6, Y2, Y2
	VADDPD  Y7, Y3, Y3
	VMOVUPD Y0, (DX)
	VMOVUPD Y1, 32(DX)
	VMOVUPD Y2, 64(DX)
	VMOVUPD Y3, 96(DX)
	ADDQ    $128, DX
	ADDQ    $128, DI
	SUBQ    $16, R9
	JMP     dcols16

dcols4:
	TESTQ  R9, R9
	JZ     done
	VXORPD Y0, Y0, Y0
	VXORPD Y4, Y4, Y4
	MOVQ   DI, R11
	MOVQ   SI, R12
	MOVQ   CX, R13

dpairs4:
	CMPQ         R13, $2
	JLT          dlast4
	VBROADCASTSD (R12), Y8
	VBROADCASTSD 8(R12), Y9
	VFMADD231PD  (R11), Y8, Y0
	VFMADD231PD  (R11)(R8*1), Y9, Y4
	LEAQ         (R11)(R8*2), R11
	ADDQ         $16, R12
	SUBQ         $2, R13
	JMP          dpairs4

dlast4:
	TESTQ        R13, R13
	JZ           dstore4
	VBROADCASTSD (R12), Y8
	VFMADD231PD  (R11), Y8, Y0

dstore4:
	VADDPD  Y4, Y0, Y0
	VMOVUPD Y0, (DX)
	ADDQ    $32, DX
	ADDQ    $32, DI
	SUBQ    $4, R9
	JMP     dcols4

done:
	VZEROUPPER
	RET
