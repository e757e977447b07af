package ops

import (
	"fmt"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
)

// AddPositions adds position vectors to a batch of sequences:
//
//	y[b, t, :] = x[b, t, :] + pe[t, :]      x: [batch, len, d], pe: [maxLen, d], len ≤ maxLen
//
// pe may be a constant (sinusoidal encodings) or a parameter (learned ones).
func AddPositions(s *graph.Scope, x, pe *G.Node) *G.Node {
	return s.Record(func() (*G.Node, error) { return addPositions(x, pe) }, x, pe)
}

func addPositions(x, pe *G.Node) (*G.Node, error) {
	xs, ps := x.Shape(), pe.Shape()
	if x.Dims() != 3 || pe.Dims() != 2 || xs[2] != ps[1] || xs[1] > ps[0] {
		return nil, errors.Errorf("add positions: x %v needs [batch, len, d] and pe %v needs [maxLen ≥ len, d]", xs, ps)
	}
	return graph.Op{
		Name:   "add_positions",
		Arity:  2,
		Shape:  firstShape,
		F32:    graph.Kernels[float32]{Forward: addPositionsKernel[float32]},
		F64:    graph.Kernels[float64]{Forward: addPositionsKernel[float64]},
		Device: addPositionsDevice,
		ONNX:   addPositionsONNX,
		Diff:   []bool{true, true},
		Grad: func(_ G.Nodes, _, dy *G.Node) (G.Nodes, error) {
			dpe, err := positionsGrad(dy, ps[0])
			return G.Nodes{dy, dpe}, err
		},
	}.Apply(x, pe)
}

// addPositionsKernel adds the rows of pe in[1], one sequence long, to
// every sequence of x in[0], several goroutines each taking some sequences.
func addPositionsKernel[T graph.Float](y graph.Operand[T], in []graph.Operand[T]) error {
	n := len(y.Data) / y.Shape[0]
	pe := in[1].Data[:n]
	graph.ParallelFor(y.Shape[0], n, func(lo, hi int) {
		for b := lo * n; b < hi*n; b += n {
			graph.AddRow(y.Data[b:b+n], in[0].Data[b:b+n], pe)
		}
	})
	return nil
}

// positionsGrad is AddPositions' gradient for pe: dpe[t, :] = Σ_b dy[b, t, :] for
// t < len, zero beyond.
func positionsGrad(dy *G.Node, maxLen int) (*G.Node, error) {
	shape := tensor.Shape{maxLen, dy.Shape()[2]}
	return graph.Op{
		Name:   fmt.Sprintf("add_positions_grad(maxLen=%d)", maxLen),
		Arity:  1,
		Shape:  func([]tensor.Shape) (tensor.Shape, error) { return shape.Clone(), nil },
		F32:    graph.Kernels[float32]{Forward: positionsGradKernel[float32]},
		F64:    graph.Kernels[float64]{Forward: positionsGradKernel[float64]},
		Device: positionsGradDevice,
	}.Apply(dy)
}

// positionsGradKernel sums the sequences of dy in[0] into the rows of dpe
// below their length and zeroes the rest.
func positionsGradKernel[T graph.Float](dpe graph.Operand[T], in []graph.Operand[T]) error {
	n := len(in[0].Data) / in[0].Shape[0]
	clear(dpe.Data)
	for r := 0; r < len(in[0].Data); r += n {
		for j, v := range in[0].Data[r : r+n] {
			dpe.Data[j] += v
		}
	}
	return nil
}

// firstShape is the shape rule of ops whose output has their first input's
// shape, the others' shapes checked by the op itself.
func firstShape(in []tensor.Shape) (tensor.Shape, error) { return in[0].Clone(), nil }
