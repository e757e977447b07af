package graph

import (
	"fmt"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	blas "github.com/transformer-go/transformer/graph/internal/gemm"
)

// MatMul multiplies the last axis of x by the matrix w, treating every leading
// axis of x as rows:
//
//	y[..., o] = Σ_i x[..., i] · w[i, o]        (transW false, w: [in, out])
//	y[..., o] = Σ_i x[..., i] · w[o, i]        (transW true,  w: [out, in])
//
// so x [batch, len, dModel] needs no reshape. transW lets one matrix serve as
// both the embedding [vocab, dModel] and the pre-softmax projection.
func MatMul(x, w *G.Node, transW bool) (*G.Node, error) {
	return product{transW: transW}.apply(x, w, nil)
}

// Affine is MatMul(x, w, transW) plus the bias b [out] on every row, in one
// op: the GEMM adds b to each block of y as it finishes it, instead of a
// second pass over y.
func Affine(x, w, b *G.Node, transW bool) (*G.Node, error) {
	return product{transW: transW}.apply(x, w, b)
}

// AffineReLU is ReLU(Affine(x, w, b, transW)) in one op, the first layer of
// the feed-forward network:
//
//	y = max(0, x·op(w) + b)
//
// The GEMM applies the ReLU with the bias, and the pre-activation is never
// stored: the gradient reads the output, which is positive exactly where
// the pre-activation is (dz = dy where y > 0).
func AffineReLU(x, w, b *G.Node, transW bool) (*G.Node, error) {
	return product{transW: transW, relu: true}.apply(x, w, b)
}

// product is the op of MatMul, Affine and AffineReLU: y = f(x·op(w) + b),
// with f max(·, 0) when relu is set, else the identity. Its kernel takes the
// packed copy of wp, w's parameter, that its program's runtime keeps (nil:
// it never does).
type product struct {
	transW, relu bool
	wp           *param
}

// apply adds the product to the graph, with the bias b unless it is nil.
func (pr product) apply(x, w, b *G.Node) (*G.Node, error) {
	if w == nil || x == nil {
		return nil, errors.New("matmul: no x or no w")
	}
	if w.Dims() != 2 || x.Dims() < 1 {
		return nil, errors.Errorf("matmul: x %v by w %v: w must be a matrix", x.Shape(), w.Shape())
	}
	in, out := w.Shape()[0], w.Shape()[1]
	if pr.transW {
		in, out = out, in
	}
	if lastDim(x.Shape()) != in {
		return nil, errors.Errorf("matmul: x %v by w %v (transposed: %t): inner sizes differ", x.Shape(), w.Shape(), pr.transW)
	}
	op := Op{
		Name:  fmt.Sprintf("matmul(transW=%t)", pr.transW),
		Arity: 2,
		Shape: func(s []tensor.Shape) (tensor.Shape, error) {
			y := s[0].Clone()
			y[len(y)-1] = out
			return y, nil
		},
		F32:    Kernels[float32]{Forward: matMulKernel[float32](pr, out)},
		F64:    Kernels[float64]{Forward: matMulKernel[float64](pr, out)},
		BF16:   Kernels[float32]{Forward: matMulKernelBF16(pr, out)},
		Device: productDevice(pr, out),
		ONNX:   productONNX(pr),
		Diff:   []bool{true, true},
		Grad:   pr.grad,
	}
	if b == nil {
		if pr.relu {
			return nil, errors.New("affine_relu: no bias")
		}
		return op.Apply(x, w)
	}
	if b.Dims() != 1 || b.Shape()[0] != out {
		return nil, errors.Errorf("affine: bias %v for %d outputs: want a vector of %d", b.Shape(), out, out)
	}
	op.Name, op.Arity, op.Diff = fmt.Sprintf("affine(transW=%t)", pr.transW), 3, []bool{true, true, true}
	if pr.relu {
		op.Name, op.SaveOutput = fmt.Sprintf("affine_relu(transW=%t)", pr.transW), true
	}
	return op.Apply(x, w, b)
}

// grad is the product's gradients given its output y and y's gradient dy:
// with dz = dy, or for AffineReLU dz = dy where y > 0,
//
//	dx = dz · op(w)ᵀ,  dw from x and dz (matMulGradW),  db = Σ_rows dz
func (pr product) grad(in G.Nodes, y, dy *G.Node) (G.Nodes, error) {
	dz := dy
	if pr.relu {
		var err error
		if dz, err = reluGradFromOutput(y, dy); err != nil {
			return nil, err
		}
	}
	// dx = dz · wᵀ: the same op with the other transpose flag, and w's
	// packed copies.
	dx, err := product{transW: !pr.transW, wp: pr.wp}.apply(dz, in[1], nil)
	if err != nil {
		return nil, err
	}
	dw, err := matMulGradW(in[0], dz, pr.transW)
	if err != nil || len(in) == 2 {
		return G.Nodes{dx, dw}, err
	}
	db, err := sumTo(dz, in[2].Shape(), 1)
	return G.Nodes{dx, dw, db}, err
}

// matMulKernel is pr's y = f(x·op(w) + b) (b a third input, if any) for x
// of any rank, its leading axes as rows, with the packed copy of pr.wp when
// there is one (see packCache).
func matMulKernel[T Float](pr product, out int) func(Operand[T], []Operand[T]) error {
	return productKernel(func(rows, in int, x, w, bias, y []T) {
		pw := packed(pr.wp, pr.transW, rows, in, out, w)
		affine(pr.transW, rows, in, out, x, w, pw, bias, pr.relu, y)
	})
}

// matMulKernelBF16 is matMulKernel with BF16 products, or float32 ones
// for the small products that bfloat16 would only slow down
// (blas.BF16Pays): decided here, before w is packed, so that a product
// gives the same result with w packed beforehand or not.
func matMulKernelBF16(pr product, out int) func(Operand[float32], []Operand[float32]) error {
	f32 := matMulKernel[float32](pr, out)
	bf16 := productKernel(func(rows, in int, x, w, bias, y []float32) {
		pw := packedBF16(pr.wp, pr.transW, in, out, w)
		affineBF16(pr.transW, rows, in, out, x, w, pw, bias, pr.relu, y)
	})
	return func(y Operand[float32], x []Operand[float32]) error {
		in := lastDim(x[0].Shape)
		if !blas.BF16Pays(len(x[0].Data)/in, out, in) {
			return f32(y, x)
		}
		return bf16(y, x)
	}
}

// productKernel is the kernel of a product y = f(x·op(w) + b) computed by
// mul, given x's rows and inner size, x, w, the bias b (nil if there is no
// third input) and y.
func productKernel[T Float](mul func(rows, in int, x, w, bias, y []T)) func(Operand[T], []Operand[T]) error {
	return func(y Operand[T], x []Operand[T]) error {
		in := lastDim(x[0].Shape)
		var bias []T
		if len(x) == 3 {
			bias = x[2].Data
		}
		mul(len(x[0].Data)/in, in, x[0].Data, x[1].Data, bias, y.Data)
		return nil
	}
}

// matMulGradW is the gradient of MatMul with respect to w:
//
//	dw = xᵀ · dy  [in, out]   (transW false)
//	dw = dyᵀ · x  [out, in]   (transW true)
func matMulGradW(x, dy *G.Node, transW bool) (*G.Node, error) {
	in, out := lastDim(x.Shape()), lastDim(dy.Shape())
	shape := tensor.Shape{in, out}
	if transW {
		shape = tensor.Shape{out, in}
	}
	return Op{
		Name:   fmt.Sprintf("matmul_grad_w(transW=%t)", transW),
		Arity:  2,
		Shape:  func([]tensor.Shape) (tensor.Shape, error) { return shape.Clone(), nil },
		F32:    Kernels[float32]{Forward: matMulGradWKernel(transW, in, out, gemm[float32])},
		F64:    Kernels[float64]{Forward: matMulGradWKernel(transW, in, out, gemm[float64])},
		BF16:   Kernels[float32]{Forward: matMulGradWKernel(transW, in, out, gemmBF16)},
		Device: matMulGradWDevice(transW, in, out),
	}.Apply(x, dy)
}

// matMulGradWKernel is the kernel of matMulGradW with the GEMM mul.
func matMulGradWKernel[T Float](transW bool, in, out int, mul func(transA, transB bool, m, n, k int, a, b, c []T, beta float64)) func(Operand[T], []Operand[T]) error {
	return func(dw Operand[T], t []Operand[T]) error {
		rows := len(t[0].Data) / in
		if transW {
			mul(true, false, out, in, rows, t[1].Data, t[0].Data, dw.Data, 0)
		} else {
			mul(true, false, in, out, rows, t[0].Data, t[1].Data, dw.Data, 0)
		}
		return nil
	}
}

// AddBias adds the vector b to every row (last axis) of x: y[..., o] = x[..., o] + b[o].
func AddBias(x, b *G.Node) (*G.Node, error) {
	if b.Dims() != 1 || lastDim(x.Shape()) != b.Shape()[0] {
		return nil, errors.Errorf("add bias: x %v plus b %v: b must be a vector of x's last size", x.Shape(), b.Shape())
	}
	return Add(x, b)
}

// gemm computes c = op(a)·op(b) + beta·c for row-major a, b, c of element type
// float32 or float64, where op(a) is [m, k] and op(b) is [k, n]. Which BLAS
// does the work depends on the build: this project's own (graph/internal/gemm)
// by default, the system's OpenBLAS with the openblas tag.
func gemm[T Float](transA, transB bool, m, n, k int, a, b, c []T, beta float64) {
	gemmVia(Gemm[T], transA, transB, m, n, k, a, b, c, beta)
}

// gemmVia is gemm computed by mul, a Gemm.
func gemmVia[T Float](mul GemmFunc[T], transA, transB bool, m, n, k int, a, b, c []T, beta float64) {
	lda, ldb := k, n
	if transA {
		lda = m
	}
	if transB {
		ldb = k
	}
	mul(transA, transB, m, n, k, a, lda, b, ldb, beta, c, n)
}

// Gemm is the CPU's strided matrix product, for the kernels of ops of
// other packages as for graph's own: row-major matrices that may be blocks of
// larger ones, row i of a starting at a[i·lda] (likewise b and c),
//
//	c = op(a)·op(b) + beta·c,  op(a) [m, k] (aᵀ for transA), op(b) [k, n] (bᵀ for transB),
//
// with a beta of 0 overwriting c; a, b and c must hold every element the
// sizes reach. It multiplies in T; an op's BF16 kernel
// (Op.BF16) calls GemmBF16 instead, which the runtime picks in programs of
// BF16 products. Which BLAS does the work depends on the build, as for gemm.
func Gemm[T Float](transA, transB bool, m, n, k int, a []T, lda int, b []T, ldb int, beta float64, c []T, ldc int) {
	switch c := any(c).(type) {
	case []float32:
		sgemm(transA, transB, m, n, k, any(a).([]float32), lda, any(b).([]float32), ldb, float32(beta), c, ldc)
	case []float64:
		dgemm(transA, transB, m, n, k, any(a).([]float64), lda, any(b).([]float64), ldb, beta, c, ldc)
	}
}
