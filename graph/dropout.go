package graph

import (
	"fmt"
	"math/rand/v2"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Dropout zeroes each element of x with probability p and scales the survivors by
// 1/(1-p) (inverted dropout, Srivastava et al., 2014), so the expected value of
// every element is unchanged and evaluation needs no rescaling:
//
//	y = x ⊙ keep / (1 - p),   keep ~ Bernoulli(1 - p)
//
// A fresh mask is drawn from rng at every run of the program; the backward pass
// uses the same mask. id must differ between the dropout sites of one graph (the
// Scope numbers them), or Gorgonia would merge two sites on the same input.
func Dropout(x *G.Node, p float64, rng *rand.Rand, id int) (*G.Node, error) {
	if p < 0 || p >= 1 {
		return nil, errors.Errorf("dropout: probability %g not in [0, 1)", p)
	}
	if rng == nil {
		return nil, errors.New("dropout: no random number generator")
	}
	st := &dropoutMask{p: p, rng: rng}
	op := &kernelOp{
		name:    fmt.Sprintf("dropout(p=%g,id=%d)", p, id),
		arity:   1,
		sig:     signature(tensorType(x.Dims()), tensorType(x.Dims())),
		shape:   sameShape,
		diffWRT: []bool{true},
	}
	op.forward = func(y *tensor.Dense, in []*tensor.Dense) error {
		st.draw(y.Shape().TotalSize())
		return st.apply(y, in[0])
	}
	op.diff = func(_ G.Nodes, _, dy *G.Node) (G.Nodes, error) {
		back := &kernelOp{
			name:    fmt.Sprintf("dropout_grad(p=%g,id=%d)", p, id),
			arity:   1,
			sig:     op.sig,
			shape:   sameShape,
			forward: func(dx *tensor.Dense, in []*tensor.Dense) error { return st.apply(dx, in[0]) },
		}
		dx, err := apply(back, dy)
		return G.Nodes{dx}, err
	}
	return apply(op, x)
}

// dropoutMask is the mask of one dropout site, shared by its forward and backward op.
type dropoutMask struct {
	p    float64
	rng  *rand.Rand
	keep []bool
}

// draw draws a new mask of n elements.
func (m *dropoutMask) draw(n int) {
	if cap(m.keep) < n {
		m.keep = make([]bool, n)
	}
	m.keep = m.keep[:n]
	// One 64-bit draw gives two 32-bit uniforms.
	threshold := uint32(m.p * (1 << 32))
	for i := 0; i < n; i += 2 {
		u := m.rng.Uint64()
		m.keep[i] = uint32(u) >= threshold
		if i+1 < n {
			m.keep[i+1] = uint32(u>>32) >= threshold
		}
	}
}

// apply writes x ⊙ keep / (1-p) into y.
func (m *dropoutMask) apply(y, x *tensor.Dense) error {
	if len(m.keep) != x.Shape().TotalSize() {
		return errors.Errorf("dropout mask has %d elements, input %v", len(m.keep), x.Shape())
	}
	switch yd := y.Data().(type) {
	case []float32:
		applyMask(yd, x.Data().([]float32), m.keep, 1/(1-m.p))
	case []float64:
		applyMask(yd, x.Data().([]float64), m.keep, 1/(1-m.p))
	}
	return nil
}

func applyMask[T float](y, x []T, keep []bool, scale float64) {
	s := T(scale)
	for i, k := range keep {
		if k {
			y[i] = x[i] * s
		} else {
			y[i] = 0
		}
	}
}
