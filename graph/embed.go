package graph

import (
	"fmt"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Embed looks up the rows of the table w [vocab, d] for the integer ids and scales
// them: y[..., :] = scale · w[ids[...], :]. The output has ids' shape with d
// appended. An id outside [0, vocab) is an error when the program runs.
func Embed(w, ids *G.Node, scale float64) (*G.Node, error) {
	if w.Dims() != 2 {
		return nil, errors.Errorf("embed: table %v is not a matrix", w.Shape())
	}
	if ids.Dtype() != tensor.Int {
		return nil, errors.Errorf("embed: ids are %v, want int", ids.Dtype())
	}
	vocab, d := w.Shape()[0], w.Shape()[1]
	op := &kernelOp{
		name:  fmt.Sprintf("embed(scale=%g)", scale),
		arity: 2,
		sig:   signature(tensorType(ids.Dims()+1), tensorType(2), intTensorType(ids.Dims())),
		shape: func(s []tensor.Shape) (tensor.Shape, error) {
			return append(s[1].Clone(), d), nil
		},
		diffWRT: []bool{true, false},
	}
	op.forward = func(y *tensor.Dense, in []*tensor.Dense) error {
		ids := in[1].Data().([]int)
		if err := checkIDs(ids, vocab); err != nil {
			return err
		}
		switch yd := y.Data().(type) {
		case []float32:
			gatherRows(yd, in[0].Data().([]float32), ids, scale)
		case []float64:
			gatherRows(yd, in[0].Data().([]float64), ids, scale)
		}
		return nil
	}
	op.diff = func(in G.Nodes, _, dy *G.Node) (G.Nodes, error) {
		dw, err := scatterRows(in[1], dy, vocab, scale)
		return G.Nodes{dw, nil}, err
	}
	return apply(op, w, ids)
}

// scatterRows is Embed's gradient: dw[v, :] = scale · Σ_{i: ids[i]=v} dy[i, :].
func scatterRows(ids, dy *G.Node, vocab int, scale float64) (*G.Node, error) {
	d := lastDim(dy.Shape())
	op := &kernelOp{
		name:  fmt.Sprintf("embed_grad(vocab=%d,scale=%g)", vocab, scale),
		arity: 2,
		sig:   signature(tensorType(2), intTensorType(ids.Dims()), tensorType(dy.Dims())),
		shape: func([]tensor.Shape) (tensor.Shape, error) { return tensor.Shape{vocab, d}, nil },
	}
	op.forward = func(dw *tensor.Dense, in []*tensor.Dense) error {
		ids := in[0].Data().([]int)
		switch dwd := dw.Data().(type) {
		case []float32:
			scatterAdd(dwd, in[1].Data().([]float32), ids, scale)
		case []float64:
			scatterAdd(dwd, in[1].Data().([]float64), ids, scale)
		}
		return nil
	}
	return apply(op, ids, dy)
}

func checkIDs(ids []int, vocab int) error {
	for i, id := range ids {
		if id < 0 || id >= vocab {
			return errors.Errorf("token id %d at position %d outside the vocabulary [0, %d)", id, i, vocab)
		}
	}
	return nil
}

func gatherRows[T float](y, w []T, ids []int, scale float64) {
	d := len(y) / max(len(ids), 1)
	s := T(scale)
	for i, id := range ids {
		yr, wr := y[i*d:(i+1)*d], w[id*d:(id+1)*d]
		for j, v := range wr {
			yr[j] = s * v
		}
	}
}

func scatterAdd[T float](dw, dy []T, ids []int, scale float64) {
	d := len(dy) / max(len(ids), 1)
	s := T(scale)
	clear(dw)
	for i, id := range ids {
		wr, yr := dw[id*d:(id+1)*d], dy[i*d:(i+1)*d]
		for j, v := range yr {
			wr[j] += s * v
		}
	}
}
