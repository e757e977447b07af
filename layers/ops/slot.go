package ops

import (
	"fmt"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
)

// SetSlot writes one new position into a cache along its next-to-last axis,
// the incremental decoder's key/value cache:
//
//	y[..., t, :] = x[..., 0, :]     for t = slot[0]
//	y[..., u, :] = cache[..., u, :] for u ≠ slot[0]
//
// cache: [..., maxLen, d], x: [..., 1, d] with the same leading axes, slot: an
// int tensor [1]. A slot outside [0, maxLen) is an error when the program
// runs. The gradient of the cache is dy with the slot's rows zeroed; that of
// x is dy's rows at the slot.
func SetSlot(s *graph.Scope, cache, x, slot *G.Node) *G.Node {
	return s.Record(func() (*G.Node, error) { return setSlot(cache, x, slot) }, cache, x, slot)
}

func setSlot(cache, x, slot *G.Node) (*G.Node, error) {
	cs, xs, n := cache.Shape(), x.Shape(), cache.Dims()
	if n < 2 || len(xs) != n || xs[n-2] != 1 || xs[n-1] != cs[n-1] || !xs[:n-2].Eq(cs[:n-2]) {
		return nil, errors.Errorf("set slot: x %v must be cache %v with one position on the next-to-last axis", xs, cs)
	}
	if slot.Dtype() != tensor.Int || !slot.Shape().Eq(tensor.Shape{1}) {
		return nil, errors.Errorf("set slot: slot is %v of shape %v, want int of shape [1]", slot.Dtype(), slot.Shape())
	}
	return graph.Op{
		Name:   "set_slot",
		Arity:  3,
		Shape:  firstShape,
		F32:    graph.Kernels[float32]{Forward: setSlotKernel[float32]},
		F64:    graph.Kernels[float64]{Forward: setSlotKernel[float64]},
		Device: setSlotDevice,
		ONNX:   setSlotONNX,
		Diff:   []bool{true, true, false},
		Grad: func(in G.Nodes, _, dy *G.Node) (G.Nodes, error) {
			dcache, err := slotGrad(dy, in[2], true)
			if err != nil {
				return nil, err
			}
			dx, err := slotGrad(dy, in[2], false)
			return G.Nodes{dcache, dx, nil}, err
		},
	}.Apply(cache, x, slot)
}

// setSlotKernel copies the cache in[0] into y and the rows of x in[1]
// [..., 1, d] into slot t of y [..., maxLen, d].
func setSlotKernel[T graph.Float](y graph.Operand[T], in []graph.Operand[T]) error {
	t, n, d, err := slotIndex(in[2].Ints, y.Shape)
	if err != nil {
		return err
	}
	copy(y.Data, in[0].Data)
	for i := range len(in[1].Data) / d {
		copy(y.Data[(i*n+t)*d:(i*n+t+1)*d], in[1].Data[i*d:(i+1)*d])
	}
	return nil
}

// slotGrad is SetSlot's gradient from dy [..., maxLen, d]: dy with the slot's
// rows zeroed (cacheGrad, the cache's gradient) or the slot's rows alone as
// [..., 1, d] (x's gradient).
func slotGrad(dy, slot *G.Node, cacheGrad bool) (*G.Node, error) {
	shape := dy.Shape().Clone()
	if !cacheGrad {
		shape[len(shape)-2] = 1
	}
	return graph.Op{
		Name:   fmt.Sprintf("set_slot_grad(cache=%t)", cacheGrad),
		Arity:  2,
		Shape:  func([]tensor.Shape) (tensor.Shape, error) { return shape.Clone(), nil },
		F32:    graph.Kernels[float32]{Forward: slotGradKernel[float32](cacheGrad)},
		F64:    graph.Kernels[float64]{Forward: slotGradKernel[float64](cacheGrad)},
		Device: slotGradDevice(cacheGrad),
	}.Apply(dy, slot)
}

func slotGradKernel[T graph.Float](cacheGrad bool) func(graph.Operand[T], []graph.Operand[T]) error {
	return func(out graph.Operand[T], in []graph.Operand[T]) error {
		dy := in[0].Data
		t, n, d, err := slotIndex(in[1].Ints, in[0].Shape)
		if err != nil {
			return err
		}
		if cacheGrad {
			copy(out.Data, dy)
		}
		for i := range len(dy) / (n * d) {
			at := (i*n + t) * d
			if cacheGrad {
				clear(out.Data[at : at+d])
			} else {
				copy(out.Data[i*d:(i+1)*d], dy[at:at+d])
			}
		}
		return nil
	}
}

// slotIndex reads the slot t and checks it against the cache shape s
// [..., maxLen, d], returning maxLen and d too.
func slotIndex(slot []int, s tensor.Shape) (t, maxLen, d int, err error) {
	t, maxLen, d = slot[0], s[len(s)-2], s[len(s)-1]
	if t < 0 || t >= maxLen {
		return 0, 0, 0, errors.Errorf("slot %d outside the cache's [0, %d)", t, maxLen)
	}
	return t, maxLen, d, nil
}
