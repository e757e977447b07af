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
	return Op{
		Name:  fmt.Sprintf("embed(scale=%g)", scale),
		Arity: 2,
		Shape: func(s []tensor.Shape) (tensor.Shape, error) {
			return append(s[1].Clone(), d), nil
		},
		F32:    embedKernels[float32](vocab, scale),
		F64:    embedKernels[float64](vocab, scale),
		Device: embedDevice(vocab, scale),
		ONNX:   embedONNX(scale),
		Diff:   []bool{true, false},
		Save:   []int{1},
	}.Apply(w, ids)
}

// embedKernels are Embed's kernels; the backward pass scatters:
// dw[v, :] = scale · Σ_{i: ids[i]=v} dy[i, :].
func embedKernels[T Float](vocab int, scale float64) Kernels[T] {
	return Kernels[T]{
		Forward: func(y Operand[T], in []Operand[T]) error {
			if err := checkIDs(in[1].Ints, vocab); err != nil {
				return err
			}
			gatherRows(y.Data, in[0].Data, in[1].Ints, scale)
			return nil
		},
		Backward: func(_ int, dw Operand[T], in []Operand[T], _, dy Operand[T]) error {
			scatterAdd(dw.Data, dy.Data, in[1].Ints, scale)
			return nil
		},
	}
}

func checkIDs(ids []int, vocab int) error {
	for i, id := range ids {
		if id < 0 || id >= vocab {
			return errors.Errorf("token id %d at position %d outside the vocabulary [0, %d)", id, i, vocab)
		}
	}
	return nil
}

// gatherRows writes y[i] = scale · w[ids[i]], several goroutines each taking
// some of the ids.
func gatherRows[T Float](y, w []T, ids []int, scale float64) {
	d := len(y) / max(len(ids), 1)
	forElems(len(ids), d, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			scaleInto(y[i*d:(i+1)*d], w[ids[i]*d:(ids[i]+1)*d], T(scale))
		}
	})
}

// scatterAdd writes dw[v] = scale · Σ_{i: ids[i] = v} dy[i]: several
// goroutines clear dw, then each sums its own columns over every id in
// order.
func scatterAdd[T Float](dw, dy []T, ids []int, scale float64) {
	d := len(dy) / max(len(ids), 1)
	s := T(scale)
	forSpans(len(dw), func(lo, hi int) { clear(dw[lo:hi]) })
	forElems(d, len(ids), func(c0, c1 int) {
		for i, id := range ids {
			wr, yr := dw[id*d+c0:id*d+c1], dy[i*d+c0:i*d+c1]
			for j, v := range yr {
				wr[j] += s * v
			}
		}
	})
}
