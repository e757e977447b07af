package graph

import (
	"fmt"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// BatchedMatMul multiplies the matrices in the last two axes of a and b,
// batched over the leading axes (which must be equal):
//
//	c[..., i, j] = Σ_k op(a)[..., i, k] · op(b)[..., k, j]
//
// where op transposes the last two axes when asked. Attention uses it for
// Q·Kᵀ and weights·V over [batch, heads, len, dk].
func BatchedMatMul(a, b *G.Node, transA, transB bool) (*G.Node, error) {
	m, k, n, err := batchedDims(a.Shape(), b.Shape(), transA, transB)
	if err != nil {
		return nil, err
	}
	op := &kernelOp{
		name:    fmt.Sprintf("batched_matmul(transA=%t,transB=%t)", transA, transB),
		arity:   2,
		sig:     signature(tensorType(a.Dims()), tensorType(a.Dims()), tensorType(b.Dims())),
		diffWRT: []bool{true, true},
	}
	op.shape = func(s []tensor.Shape) (tensor.Shape, error) {
		c := s[0].Clone()
		c[len(c)-2], c[len(c)-1] = m, n
		return c, nil
	}
	op.forward = func(c *tensor.Dense, in []*tensor.Dense) error {
		ad, bd, cd := in[0].Data(), in[1].Data(), c.Data()
		for i := range c.Shape().TotalSize() / (m * n) {
			gemm(transA, transB, m, n, k, part(ad, i, m*k), part(bd, i, k*n), part(cd, i, m*n), 0)
		}
		return nil
	}
	op.diff = func(in G.Nodes, _, dc *G.Node) (G.Nodes, error) {
		da, err := batchedGradA(in[0], in[1], dc, transA, transB)
		if err != nil {
			return nil, err
		}
		db, err := batchedGradB(in[0], in[1], dc, transA, transB)
		return G.Nodes{da, db}, err
	}
	return apply(op, a, b)
}

// batchedGradA is the gradient with respect to a of c = op(a)·op(b):
// dc·op(b)ᵀ, transposed when a was.
func batchedGradA(a, b, dc *G.Node, transA, transB bool) (*G.Node, error) {
	if transA {
		return BatchedMatMul(b, dc, transB, true)
	}
	return BatchedMatMul(dc, b, false, !transB)
}

// batchedGradB is the gradient with respect to b of c = op(a)·op(b):
// op(a)ᵀ·dc, transposed when b was.
func batchedGradB(a, b, dc *G.Node, transA, transB bool) (*G.Node, error) {
	if transB {
		return BatchedMatMul(dc, a, true, transA)
	}
	return BatchedMatMul(a, dc, !transA, false)
}

// batchedDims checks the shapes of a batched product and returns its sizes.
func batchedDims(as, bs tensor.Shape, transA, transB bool) (m, k, n int, err error) {
	if len(as) < 3 || len(as) != len(bs) || !as[:len(as)-2].Eq(bs[:len(bs)-2]) {
		return 0, 0, 0, errors.Errorf("batched matmul: %v by %v: need equal batch axes", as, bs)
	}
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

// part is the i-th block of size n of a float32 or float64 slice.
func part(data any, i, n int) any {
	switch d := data.(type) {
	case []float32:
		return d[i*n : (i+1)*n]
	default:
		return data.([]float64)[i*n : (i+1)*n]
	}
}
