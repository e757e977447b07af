package graph

import (
	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// AddPositions adds position vectors to a batch of sequences:
//
//	y[b, t, :] = x[b, t, :] + pe[t, :]      x: [batch, len, d], pe: [maxLen, d], len ≤ maxLen
//
// pe may be a constant (sinusoidal encodings) or a parameter (learned ones).
func AddPositions(x, pe *G.Node) (*G.Node, error) {
	xs, ps := x.Shape(), pe.Shape()
	if x.Dims() != 3 || pe.Dims() != 2 || xs[2] != ps[1] || xs[1] > ps[0] {
		return nil, errors.Errorf("add positions: x %v needs [batch, len, d] and pe %v needs [maxLen ≥ len, d]", xs, ps)
	}
	op := &kernelOp{
		name:    "add_positions",
		arity:   2,
		sig:     signature(tensorType(3), tensorType(3), tensorType(2)),
		shape:   sameShape,
		diffWRT: []bool{true, true},
	}
	op.forward = func(y *tensor.Dense, in []*tensor.Dense) error {
		n := in[0].Shape()[1] * in[0].Shape()[2]
		switch yd := y.Data().(type) {
		case []float32:
			addPositions(yd, in[0].Data().([]float32), in[1].Data().([]float32)[:n])
		case []float64:
			addPositions(yd, in[0].Data().([]float64), in[1].Data().([]float64)[:n])
		}
		return nil
	}
	op.diff = func(in G.Nodes, _, dy *G.Node) (G.Nodes, error) {
		dpe, err := positionsGrad(dy, ps[0])
		return G.Nodes{dy, dpe}, err
	}
	return apply(op, x, pe)
}

// positionsGrad is AddPositions' gradient for pe: dpe[t, :] = Σ_b dy[b, t, :] for
// t < len, zero beyond.
func positionsGrad(dy *G.Node, maxLen int) (*G.Node, error) {
	d := dy.Shape()[2]
	op := &kernelOp{
		name:  "add_positions_grad",
		arity: 1,
		sig:   signature(tensorType(2), tensorType(3)),
		shape: func([]tensor.Shape) (tensor.Shape, error) { return tensor.Shape{maxLen, d}, nil },
	}
	op.forward = func(dpe *tensor.Dense, in []*tensor.Dense) error {
		l := in[0].Shape()[1]
		switch pd := dpe.Data().(type) {
		case []float32:
			sumRows(pd[:l*d], in[0].Data().([]float32))
			clear(pd[l*d:])
		case []float64:
			sumRows(pd[:l*d], in[0].Data().([]float64))
			clear(pd[l*d:])
		}
		return nil
	}
	return apply(op, dy)
}

// addPositions adds pe, one sequence long, to every sequence of x.
func addPositions[T float](y, x, pe []T) {
	n := len(pe)
	for b := 0; b < len(x); b += n {
		for i, p := range pe {
			y[b+i] = x[b+i] + p
		}
	}
}
