package graph

import (
	"github.com/pkg/errors"
	"gorgonia.org/tensor"

	blas "github.com/transformer-go/transformer/graph/internal/gemm"
)

// Precision is how a compiled program's matrix products round their
// operands: a property of the program, not of the graph or the model, so
// one graph compiles into programs of either precision.
type Precision string

const (
	// Float32 multiplies in the graph's element type (float32 or
	// float64): the default.
	Float32 Precision = "float32"
	// BF16 rounds both operands of every matrix product (MatMul, Affine,
	// AffineReLU, BatchedMatMul, the products of their gradients and
	// those of ops' BF16 kernels, GemmBF16) to bfloat16, to nearest even,
	// and sums the products in float32, as PyTorch's autocast does on the
	// CPU. Everything else (parameters, optimizer state, norms, softmax,
	// the loss, reductions) stays float32. With AVX512_BF16 the products
	// run twice as many multiply-adds per instruction; without it they
	// widen to float32 (BF16Kernel says which). Only float32 graphs take it.
	BF16 Precision = "bf16"
)

// Precisions lists the precisions ParsePrecision accepts.
var Precisions = []Precision{Float32, BF16}

// ParsePrecision parses "float32" or "bf16"; "" is Float32.
func ParsePrecision(s string) (Precision, error) {
	switch p := Precision(s); p {
	case "":
		return Float32, nil
	case Float32, BF16:
		return p, nil
	}
	return "", errors.Errorf("precision %q: want float32 or bf16", s)
}

// String implements flag.Value.
func (p Precision) String() string { return string(p) }

// Set implements flag.Value with ParsePrecision, so that a command's
// -precision flag can be a Precision.
func (p *Precision) Set(s string) error {
	v, err := ParsePrecision(s)
	if err == nil {
		*p = v
	}
	return err
}

// valid checks that p is a precision: Float32 or BF16.
func (p Precision) valid() error {
	if p != Float32 && p != BF16 {
		return errors.Errorf("precision %q: want float32 or bf16", string(p))
	}
	return nil
}

// check reports whether a graph of element type dt can be compiled in p.
func (p Precision) check(dt tensor.Dtype) error {
	if err := p.valid(); err != nil {
		return err
	}
	if p == BF16 && dt != tensor.Float32 {
		return errors.Errorf("bf16 products need a float32 graph, not %v", dt)
	}
	return nil
}

// BF16Kernel names the kernel of BF16 products on this CPU: "avx512bf16"
// (VDPBF16PS), or a float32 kernel multiplying operands rounded to bfloat16,
// such as "avx2-widen".
func BF16Kernel() string { return blas.BF16Kernel() }

// Precision is the precision of p's products: its runtime's.
func (p *Program) Precision() Precision { return p.rt.precision }

// Runtime is the runtime p runs on.
func (p *Program) Runtime() *Runtime { return p.rt }

// affineBF16 is affine with BF16 products, for float32 only: op(w) packed
// by PackBF16B as pw unless that is nil.
func affineBF16(transW bool, m, k, n int, x, w []float32, pw *blas.PackedB[float32], bias []float32, relu bool, y []float32) {
	e := blas.Epilogue[float32]{Bias: bias, ReLU: relu}
	if pw != nil {
		blas.SgemmPacked(false, m, x, k, pw, 0, y, n, e)
		return
	}
	ldw := n
	if transW {
		ldw = k
	}
	blas.SgemmBF16(false, transW, m, n, k, x, k, w, ldw, 0, y, n, e)
}

// gemmBF16 is gemm with BF16 products, for float32 only.
func gemmBF16(transA, transB bool, m, n, k int, a, b, c []float32, beta float64) {
	gemmVia(GemmBF16, transA, transB, m, n, k, a, b, c, beta)
}

// GemmFunc is the signature of Gemm and GemmBF16: an op's kernel takes
// the one of its precision.
type GemmFunc[T Float] func(transA, transB bool, m, n, k int, a []T, lda int, b []T, ldb int, beta float64, c []T, ldc int)

// GemmBF16 is Gemm with BF16 products (see BF16), for float32 only:
// products too small for bfloat16 to pay stay float32.
func GemmBF16(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, beta float64, c []float32, ldc int) {
	blas.SgemmBF16(transA, transB, m, n, k, a, lda, b, ldb, float32(beta), c, ldc, blas.Epilogue[float32]{})
}
