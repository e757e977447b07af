package ops

import (
	"fmt"
	"math"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
)

// PaddingMask is the additive attention mask that hides padding keys, made
// in the graph from the token ids [batch, len] (an int input): [batch, 1, 1,
// len], in the scope's float type,
//
//	mask[b, 0, 0, j] = -Inf if ids[b, j] = pad, else 0
//
// layers.PaddingMask makes the same mask on the host. Made in the graph, it
// is computed where the program runs, from the ids alone, so that a batch
// crosses to a device as its ids.
func PaddingMask(s *graph.Scope, ids *G.Node, pad int) *G.Node {
	return s.Record(func() (*G.Node, error) { return idsMask(s.Dtype(), ids, pad, false) }, ids)
}

// CausalMask is the decoder's self-attention mask, made in the graph from
// the token ids [batch, len]: [batch, 1, len, len], position i attending to
// the positions j ≤ i that are not padding,
//
//	mask[b, 0, i, j] = -Inf if j > i or ids[b, j] = pad, else 0
//
// as layers.CausalMask makes it on the host.
func CausalMask(s *graph.Scope, ids *G.Node, pad int) *G.Node {
	return s.Record(func() (*G.Node, error) { return idsMask(s.Dtype(), ids, pad, true) }, ids)
}

// idsMask is the op of PaddingMask (causal false) or CausalMask.
func idsMask(dt tensor.Dtype, ids *G.Node, pad int, causal bool) (*G.Node, error) {
	if ids.Dims() != 2 || ids.Dtype() != tensor.Int {
		return nil, errors.Errorf("mask of ids %v %v: want int ids [batch, len]", ids.Dtype(), ids.Shape())
	}
	batch, n := ids.Shape()[0], ids.Shape()[1]
	out := tensor.Shape{batch, 1, 1, n}
	if causal {
		out = tensor.Shape{batch, 1, n, n}
	}
	return graph.Op{
		Name:   fmt.Sprintf("ids_mask(pad=%d,causal=%t)", pad, causal),
		Arity:  1,
		Type:   dt,
		Shape:  func([]tensor.Shape) (tensor.Shape, error) { return out.Clone(), nil },
		F32:    graph.Kernels[float32]{Forward: maskKernel[float32](batch, n, pad, causal)},
		F64:    graph.Kernels[float64]{Forward: maskKernel[float64](batch, n, pad, causal)},
		Device: maskDevice(batch, n, pad, causal),
		ONNX:   idsMaskONNX(pad, causal),
	}.Apply(ids)
}

// maskKernel writes the mask of ids in[0] [batch, n]: rows of n, one per
// (b, i) of the causal mask, one per b of the padding mask.
func maskKernel[T graph.Float](batch, n, pad int, causal bool) func(graph.Operand[T], []graph.Operand[T]) error {
	inf := T(math.Inf(-1))
	return func(m graph.Operand[T], in []graph.Operand[T]) error {
		ids := in[0].Ints
		rows := len(m.Data) / n
		for r := range rows {
			b, i := r, n
			if causal {
				b, i = r/n, r%n
			}
			row := m.Data[r*n : (r+1)*n]
			for j := range row {
				row[j] = 0
				if j > i || ids[b*n+j] == pad {
					row[j] = inf
				}
			}
		}
		return nil
	}
}

// maskDevice is the masks' device kernel, ids_mask_f32.
func maskDevice(batch, n, pad int, causal bool) graph.DeviceKernels {
	return graph.DeviceKernels{Forward: func(d *graph.DeviceCall, m graph.DeviceOperand, in []graph.DeviceOperand) error {
		return d.Launch(idsMaskF32.Elems(m.Len()).Ptr(m.Ptr).Ptr(in[0].Ptr).Int(batch).Int(n).Int(pad).Int(b2i(causal)))
	}}
}
