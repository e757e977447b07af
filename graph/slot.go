package graph

import (
	"fmt"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
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
func SetSlot(cache, x, slot *G.Node) (*G.Node, error) {
	if err := checkSlotShapes(cache.Shape(), x.Shape(), slot); err != nil {
		return nil, err
	}
	op := &kernelOp{
		name:    "set_slot",
		arity:   3,
		sig:     signature(tensorType(cache.Dims()), tensorType(cache.Dims()), tensorType(x.Dims()), intTensorType(1)),
		shape:   sameShape,
		diffWRT: []bool{true, true, false},
	}
	op.forward = func(y *tensor.Dense, in []*tensor.Dense) error {
		t, err := slotIndex(in[2], y.Shape())
		if err != nil {
			return err
		}
		switch yd := y.Data().(type) {
		case []float32:
			copy(yd, in[0].Data().([]float32))
			writeSlot(yd, in[1].Data().([]float32), t, y.Shape())
		case []float64:
			copy(yd, in[0].Data().([]float64))
			writeSlot(yd, in[1].Data().([]float64), t, y.Shape())
		}
		return nil
	}
	op.diff = func(in G.Nodes, _, dy *G.Node) (G.Nodes, error) {
		dcache, err := slotGrad(dy, in[2], true)
		if err != nil {
			return nil, err
		}
		dx, err := slotGrad(dy, in[2], false)
		return G.Nodes{dcache, dx, nil}, err
	}
	return apply(op, cache, x, slot)
}

// checkSlotShapes checks SetSlot's operands: cache [..., maxLen, d], x
// [..., 1, d] and slot an int [1].
func checkSlotShapes(cs, xs tensor.Shape, slot *G.Node) error {
	n := len(cs)
	if n < 2 || len(xs) != n || xs[n-2] != 1 || xs[n-1] != cs[n-1] || !xs[:n-2].Eq(cs[:n-2]) {
		return errors.Errorf("set slot: x %v must be cache %v with one position on the next-to-last axis", xs, cs)
	}
	if slot.Dtype() != tensor.Int || !slot.Shape().Eq(tensor.Shape{1}) {
		return errors.Errorf("set slot: slot is %v of shape %v, want int of shape [1]", slot.Dtype(), slot.Shape())
	}
	return nil
}

// slotGrad is SetSlot's gradient from dy [..., maxLen, d]: dy with the slot's
// rows zeroed (cacheGrad, the cache's gradient) or the slot's rows alone as
// [..., 1, d] (x's gradient).
func slotGrad(dy, slot *G.Node, cacheGrad bool) (*G.Node, error) {
	op := &kernelOp{
		name:  fmt.Sprintf("set_slot_grad(cache=%t)", cacheGrad),
		arity: 2,
		sig:   signature(tensorType(dy.Dims()), tensorType(dy.Dims()), intTensorType(1)),
	}
	op.shape = func(s []tensor.Shape) (tensor.Shape, error) {
		out := s[0].Clone()
		if !cacheGrad {
			out[len(out)-2] = 1
		}
		return out, nil
	}
	op.forward = func(out *tensor.Dense, in []*tensor.Dense) error {
		t, err := slotIndex(in[1], in[0].Shape())
		if err != nil {
			return err
		}
		switch od := out.Data().(type) {
		case []float32:
			slotBackward(od, in[0].Data().([]float32), t, in[0].Shape(), cacheGrad)
		case []float64:
			slotBackward(od, in[0].Data().([]float64), t, in[0].Shape(), cacheGrad)
		}
		return nil
	}
	return apply(op, dy, slot)
}

// slotIndex reads the slot and checks it against the cache shape s.
func slotIndex(slot *tensor.Dense, s tensor.Shape) (int, error) {
	t := slot.Data().([]int)[0]
	if n := s[len(s)-2]; t < 0 || t >= n {
		return 0, errors.Errorf("slot %d outside the cache's [0, %d)", t, n)
	}
	return t, nil
}

// writeSlot copies the rows of x [..., 1, d] into slot t of y [..., maxLen, d].
func writeSlot[T float](y, x []T, t int, s tensor.Shape) {
	n, d := s[len(s)-2], s[len(s)-1]
	for i := range len(x) / d {
		copy(y[(i*n+t)*d:(i*n+t+1)*d], x[i*d:(i+1)*d])
	}
}

// slotBackward writes dy with slot t zeroed into out (cacheGrad), or dy's rows
// at slot t into out [..., 1, d].
func slotBackward[T float](out, dy []T, t int, s tensor.Shape, cacheGrad bool) {
	n, d := s[len(s)-2], s[len(s)-1]
	if cacheGrad {
		copy(out, dy)
	}
	for i := range len(dy) / (n * d) {
		at := (i*n + t) * d
		if cacheGrad {
			clear(out[at : at+d])
		} else {
			copy(out[i*d:(i+1)*d], dy[at:at+d])
		}
	}
}

// SetSlot is SetSlot recorded in s.
func (s *Scope) SetSlot(cache, x, slot *G.Node) *G.Node {
	return s.do(func() (*G.Node, error) { return SetSlot(cache, x, slot) }, cache, x, slot)
}
