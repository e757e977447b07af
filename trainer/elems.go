package trainer

import (
	"math"

	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/trainer/dist"
)

// elems are the loops the trainer runs over the elements of tensors of
// one element type, float32 or float64 (the parameters' and Adam's
// moments').
type elems interface {
	// nonFinite is the first value of d that is NaN or infinite, or 0.
	nonFinite(d *tensor.Dense) float64
	// hash is the FNV-1a hash h continued over d's bits, a word at a time.
	hash(h uint64, d *tensor.Dense) uint64
	// broadcast replaces d's values with rank 0's.
	broadcast(w *dist.World, d *tensor.Dense) error
	// sumWithTail is sumWithTail of parallel.go on flat, a []T.
	sumWithTail(w *dist.World, flat any, tail []float64) (any, error)
}

// elemsOf are the loops of tensors of dt: the trainer's one switch on an
// element type.
func elemsOf(dt tensor.Dtype) elems {
	if dt == tensor.Float32 {
		return loops[float32]{sum: (*dist.World).SumF32, bcast: (*dist.World).BroadcastF32,
			bits: func(x float32) uint64 { return uint64(math.Float32bits(x)) }}
	}
	return loops[float64]{sum: (*dist.World).SumF64, bcast: (*dist.World).BroadcastF64, bits: math.Float64bits}
}

// loops are elems of T, with the world's collectives and the bits of T.
type loops[T float32 | float64] struct {
	sum, bcast func(*dist.World, []T) error
	bits       func(T) uint64
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

func (l loops[T]) broadcast(w *dist.World, d *tensor.Dense) error {
	return l.bcast(w, d.Data().([]T))
}

func (l loops[T]) sumWithTail(w *dist.World, flat any, tail []float64) (any, error) {
	b, _ := flat.([]T)
	return sumWithTail(func(s []T) error { return l.sum(w, s) }, b, tail)
}
