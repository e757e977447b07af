package graph

import (
	"fmt"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// BatchedMatMul multiplies the matrices in the last two axes of a and b,
// batched over the leading axes, which broadcast (BroadcastShape: NumPy's
// matmul rule):
//
//	c[..., i, j] = Σ_k op(a)[..., i, k] · op(b)[..., k, j]
//
// where op transposes the last two axes when asked. Attention uses it for
// Q·Kᵀ and weights·V over [batch, heads, len, dk]; grouped-query attention
// lets one key head [batch, groups, 1, len, dk] serve several query heads
// [batch, groups, heads/groups, len, dk].
func BatchedMatMul(a, b *G.Node, transA, transB bool) (*G.Node, error) {
	if a.Dims() < 2 || b.Dims() < 2 {
		return nil, errors.Errorf("batched matmul: %v by %v: need matrices", a.Shape(), b.Shape())
	}
	batch, err := BroadcastShape(batchOf(a.Shape()), batchOf(b.Shape()))
	if err != nil {
		return nil, errors.Wrapf(err, "batched matmul: %v by %v: batch axes", a.Shape(), b.Shape())
	}
	return batchedProduct(a, b, transA, transB, batch)
}

// batchOf is the batch shape of a stack of matrices s: all but its last two axes.
func batchOf(s tensor.Shape) tensor.Shape { return s[:len(s)-2] }

// batchedProduct is c = op(a)·op(b) over the broadcast of a's and b's batch
// axes, with c's batch axes out: the broadcast itself for BatchedMatMul, or
// an operand's batch axes for a gradient, where the products of the batch
// entries that broadcast onto one entry of c are summed.
func batchedProduct(a, b *G.Node, transA, transB bool, out tensor.Shape) (*G.Node, error) {
	m, k, n, err := matrixDims(a.Shape(), b.Shape(), transA, transB)
	if err != nil {
		return nil, err
	}
	full, err := BroadcastShape(batchOf(a.Shape()), batchOf(b.Shape()))
	if err != nil {
		return nil, err
	}
	sum := !full.Eq(out)
	if bc, err := BroadcastShape(out, full); err != nil || !bc.Eq(full) {
		return nil, errors.Errorf("batched matmul: batch axes %v do not broadcast to %v", out, full)
	}
	plan := newBcast(full, batchOf(a.Shape()), batchOf(b.Shape()), out)
	cShape := append(out.Clone(), m, n)
	op := Op{
		Name:   fmt.Sprintf("batched_matmul(transA=%t,transB=%t,out=%v)", transA, transB, cShape),
		Arity:  2,
		Shape:  func([]tensor.Shape) (tensor.Shape, error) { return cShape.Clone(), nil },
		F32:    Kernels[float32]{Forward: batchedKernel(plan, transA, transB, m, k, n, sum, gemm[float32])},
		F64:    Kernels[float64]{Forward: batchedKernel(plan, transA, transB, m, k, n, sum, gemm[float64])},
		BF16:   Kernels[float32]{Forward: batchedKernel(plan, transA, transB, m, k, n, sum, gemmBF16)},
		Device: batchedDevice(full, [3]tensor.Shape{batchOf(a.Shape()), batchOf(b.Shape()), out}, transA, transB, m, k, n),
	}
	if !sum { // a product that sums is a gradient's
		op.ONNX = batchedONNX(transA, transB)
		op.Diff = []bool{true, true}
		op.Grad = func(in G.Nodes, _, dc *G.Node) (G.Nodes, error) {
			da, err := batchedGradA(in[0], in[1], dc, transA, transB)
			if err != nil {
				return nil, err
			}
			db, err := batchedGradB(in[0], in[1], dc, transA, transB)
			return G.Nodes{da, db}, err
		}
	}
	return op.Apply(a, b)
}

// batchedKernel runs one product per entry of the broadcast batch, spread
// over goroutines; with sum, the products that land on one entry of c add
// up.
func batchedKernel[T Float](p bcast, transA, transB bool, m, k, n int, sum bool, mul func(transA, transB bool, m, n, k int, a, b, c []T, beta float64)) func(Operand[T], []Operand[T]) error {
	sa, sb, sc := m*k, k*n, m*n
	beta := 0.0
	if sum {
		beta = 1
	}
	return func(c Operand[T], in []Operand[T]) error {
		if sum {
			clear(c.Data)
		}
		a, b := in[0].Data, in[1].Data
		product := func(_ int, off, st []int, cnt int) {
			for j := range cnt {
				ia, ib, ic := off[0]+j*st[0], off[1]+j*st[1], off[2]+j*st[2]
				mul(transA, transB, m, n, k, a[ia*sa:(ia+1)*sa], b[ib*sb:(ib+1)*sb], c.Data[ic*sc:(ic+1)*sc], beta)
			}
		}
		// The products run on several goroutines; where several land on one
		// matrix of c, one goroutine adds them all, in order.
		if sum {
			p.accumulate(2, m*n*k, product)
		} else {
			p.parallel(m*n*k, product)
		}
		return nil
	}
}

// batchedGradA is the gradient with respect to a of c = op(a)·op(b):
// dc·op(b)ᵀ, transposed when a was, summed over a's broadcast batch axes.
func batchedGradA(a, b, dc *G.Node, transA, transB bool) (*G.Node, error) {
	batch := batchOf(a.Shape())
	if transA {
		return batchedProduct(b, dc, transB, true, batch)
	}
	return batchedProduct(dc, b, false, !transB, batch)
}

// batchedGradB is the gradient with respect to b of c = op(a)·op(b):
// op(a)ᵀ·dc, transposed when b was, summed over b's broadcast batch axes.
func batchedGradB(a, b, dc *G.Node, transA, transB bool) (*G.Node, error) {
	batch := batchOf(b.Shape())
	if transB {
		return batchedProduct(dc, a, true, transA, batch)
	}
	return batchedProduct(a, dc, !transA, false, batch)
}

// matrixDims checks the inner sizes of a batched product and returns its sizes.
func matrixDims(as, bs tensor.Shape, transA, transB bool) (m, k, n int, err error) {
	m, k = as[len(as)-2], as[len(as)-1]
	if transA {
		m, k = k, m
	}
	kb, n := bs[len(bs)-2], bs[len(bs)-1]
	if transB {
		kb, n = n, kb
	}
	if k != kb {
		return 0, 0, 0, errors.Errorf("batched matmul: %v by %v (transposed %t, %t): inner sizes differ", as, bs, transA, transB)
	}
	return m, k, n, nil
}
