package graph

import (
	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Add is the elementwise sum of a and b, which have one shape (the residual
// connections): y = a + b.
func Add(a, b *G.Node) (*G.Node, error) {
	if !a.Shape().Eq(b.Shape()) {
		return nil, errors.Errorf("add: shapes %v and %v differ", a.Shape(), b.Shape())
	}
	op := &kernelOp{
		name:    "add",
		arity:   2,
		sig:     signature(tensorType(a.Dims()), tensorType(a.Dims()), tensorType(a.Dims())),
		shape:   sameShape,
		diffWRT: []bool{true, true},
	}
	op.forward = func(y *tensor.Dense, in []*tensor.Dense) error {
		switch yd := y.Data().(type) {
		case []float32:
			addTo(yd, in[0].Data().([]float32), in[1].Data().([]float32))
		case []float64:
			addTo(yd, in[0].Data().([]float64), in[1].Data().([]float64))
		}
		return nil
	}
	op.diff = func(_ G.Nodes, _, dy *G.Node) (G.Nodes, error) { return G.Nodes{dy, dy}, nil }
	return apply(op, a, b)
}

// ReLU is max(0, x) elementwise (the feed-forward network's activation).
func ReLU(x *G.Node) (*G.Node, error) {
	op := &kernelOp{
		name:    "relu",
		arity:   1,
		sig:     signature(tensorType(x.Dims()), tensorType(x.Dims())),
		shape:   sameShape,
		diffWRT: []bool{true},
	}
	op.forward = func(y *tensor.Dense, in []*tensor.Dense) error {
		switch yd := y.Data().(type) {
		case []float32:
			relu(yd, in[0].Data().([]float32))
		case []float64:
			relu(yd, in[0].Data().([]float64))
		}
		return nil
	}
	op.diff = func(in G.Nodes, _, dy *G.Node) (G.Nodes, error) {
		dx, err := reluGrad(in[0], dy)
		return G.Nodes{dx}, err
	}
	return apply(op, x)
}

// reluGrad is dx = dy where x > 0, else 0.
func reluGrad(x, dy *G.Node) (*G.Node, error) {
	op := &kernelOp{
		name:  "relu_grad",
		arity: 2,
		sig:   signature(tensorType(x.Dims()), tensorType(x.Dims()), tensorType(x.Dims())),
		shape: sameShape,
	}
	op.forward = func(dx *tensor.Dense, in []*tensor.Dense) error {
		switch d := dx.Data().(type) {
		case []float32:
			reluBackward(d, in[0].Data().([]float32), in[1].Data().([]float32))
		case []float64:
			reluBackward(d, in[0].Data().([]float64), in[1].Data().([]float64))
		}
		return nil
	}
	return apply(op, x, dy)
}

func addTo[T float](y, a, b []T) {
	for i := range y {
		y[i] = a[i] + b[i]
	}
}

func relu[T float](y, x []T) {
	for i, v := range x {
		y[i] = max(v, 0)
	}
}

func reluBackward[T float](dx, x, dy []T) {
	for i, v := range x {
		if v > 0 {
			dx[i] = dy[i]
		} else {
			dx[i] = 0
		}
	}
}
