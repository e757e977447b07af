package trainer

import (
	"math"

	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/trainer/dist"
	"github.com/transformer-go/transformer/trainer/internal/vadam"
)

// elems are the loops the trainer runs over the elements of tensors of
// one element type, float32 or float64 (the parameters', their
// gradients' and Adam's moments').
type elems interface {
	// addScaled adds n·g to acc.
	addScaled(acc, g *tensor.Dense, n float64)
	// sumSquares is Σ g², summed in float64.
	sumSquares(g *tensor.Dense) float64
	// nonFinite is the first value of d that is NaN or infinite, or 0.
	nonFinite(d *tensor.Dense) float64
	// hash is the FNV-1a hash h continued over d's bits, a word at a time.
	hash(h uint64, d *tensor.Dense) uint64
	// adam appends to jobs Adam's step k of theta, chunk by chunk
	// (appendChunks).
	adam(jobs []func(), theta, g, m, v *tensor.Dense, k vadam.Step) []func()
	// broadcast replaces d's values with rank 0's.
	broadcast(w *dist.World, d *tensor.Dense) error
	// allReduce is the all-reduce of parallel.go's allReduce, with buf (nil
	// at first) its buffer, which it returns.
	allReduce(w *dist.World, buf any, names []string, grads map[string]*tensor.Dense, tail []float64) (any, error)
}

// elemsOf are the loops of tensors of dt: the trainer's one switch on an
// element type.
func elemsOf(dt tensor.Dtype) elems {
	if dt == tensor.Float32 {
		return loops[float32]{sum: (*dist.World).SumF32, bcast: (*dist.World).BroadcastF32,
			bits: func(x float32) uint64 { return uint64(math.Float32bits(x)) }, update: vadam.Update32}
	}
	return loops[float64]{sum: (*dist.World).SumF64, bcast: (*dist.World).BroadcastF64, bits: math.Float64bits, update: vadam.Update64}
}

// loops are elems of T, with the world's collectives, the bits of T and
// Adam's update of T.
type loops[T float32 | float64] struct {
	sum, bcast func(*dist.World, []T) error
	bits       func(T) uint64
	update     func(theta, g, m, v []T, s vadam.Step)
}

func (loops[T]) addScaled(acc, g *tensor.Dense, n float64) {
	a := acc.Data().([]T)
	for i, v := range g.Data().([]T) {
		a[i] += T(n) * v
	}
}

func (loops[T]) sumSquares(g *tensor.Dense) float64 {
	var sq float64
	for _, v := range g.Data().([]T) {
		sq += float64(v) * float64(v)
	}
	return sq
}

func (loops[T]) nonFinite(d *tensor.Dense) float64 {
	for _, v := range d.Data().([]T) {
		if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
			return f
		}
	}
	return 0
}

func (l loops[T]) hash(h uint64, d *tensor.Dense) uint64 {
	const prime = 1099511628211
	for _, x := range d.Data().([]T) {
		h = (h ^ l.bits(x)) * prime
	}
	return h
}

func (l loops[T]) adam(jobs []func(), theta, g, m, v *tensor.Dense, k vadam.Step) []func() {
	th, gs, ms, vs := theta.Data().([]T), g.Data().([]T), m.Data().([]T), v.Data().([]T)
	return appendChunks(jobs, len(th), func(lo, hi int) { l.update(th[lo:hi], gs[lo:hi], ms[lo:hi], vs[lo:hi], k) })
}

func (l loops[T]) broadcast(w *dist.World, d *tensor.Dense) error {
	return l.bcast(w, d.Data().([]T))
}

func (l loops[T]) allReduce(w *dist.World, buf any, names []string, grads map[string]*tensor.Dense, tail []float64) (any, error) {
	b, _ := buf.([]T) // nil at first
	return allReduce(func(s []T) error { return l.sum(w, s) }, b, names, grads, tail)
}
