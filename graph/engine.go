package graph

import (
	"github.com/transformer-go/transformer/graph/internal/vrow"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// machineEngine is the tensor engine the TapeMachine gives every value it
// computes: Gorgonia's, except that Add of two float32 tensors of the same
// shape, written into one of them or into a given tensor, runs on every
// core eight lanes at a time. That Add is what the `+` nodes run that
// G.Grad puts where gradients meet (a node read by several ops), which
// tensor.StdEng runs on one core one element at a time: 2% of a training
// step of the small model. The sums are the same float32 additions, so the
// results are the same bit for bit.
type machineEngine struct{ G.StandardEngine }

// Add is G.StandardEngine's Add, the common case done by fastAdd.
func (e machineEngine) Add(a, b tensor.Tensor, opts ...tensor.FuncOpt) (tensor.Tensor, error) {
	if y, ok := fastAdd(a, b, opts); ok {
		return y, nil
	}
	return e.StandardEngine.Add(a, b, opts...)
}

// fastAdd computes a + b into the reused tensor, or into a when the add
// may overwrite it, when all are float32 *tensor.Dense of the same shape
// laid out contiguously, and reports whether it did.
func fastAdd(a, b tensor.Tensor, opts []tensor.FuncOpt) (tensor.Tensor, bool) {
	fo := tensor.ParseFuncOpts(opts...)
	reuse, incr := fo.IncrReuse()
	safe := fo.Safe()
	y := reuse
	if y == nil && !safe {
		y = a
	}
	x, ok1 := plainF32(a, a.Shape())
	z, ok2 := plainF32(b, a.Shape())
	out, ok3 := plainF32(y, a.Shape())
	if incr || !ok1 || !ok2 || !ok3 {
		return nil, false
	}
	forElems(len(out), 1, func(lo, hi int) { vrow.Add(out[lo:hi], x[lo:hi], z[lo:hi]) })
	return y, true
}

// plainF32 returns the elements of t when t is a float32 *tensor.Dense of
// shape s that is not a view.
func plainF32(t tensor.Tensor, s tensor.Shape) ([]float32, bool) {
	d, ok := t.(*tensor.Dense)
	if !ok || d.Dtype() != tensor.Float32 || d.IsMaterializable() || !d.Shape().Eq(s) || !d.DataOrder().IsContiguous() {
		return nil, false
	}
	x, n := d.Float32s(), s.TotalSize()
	if len(x) < n {
		return nil, false
	}
	return x[:n], true
}
