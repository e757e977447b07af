package graph

import (
	"sync"

	"github.com/transformer-go/transformer/graph/internal/par"
)

// grainElems is the least number of elements a kernel hands to another
// goroutine: about ten microseconds of a simple loop, well above what the
// hand-off costs. Tests lower it to split small tensors into many parts.
var grainElems = 1 << 14

// forElems calls f on ranges [lo, hi) covering [0, n), in parallel when
// there is enough work, where each index stands for cost elements of work.
// Which goroutine computes an index never changes what it computes.
func forElems(n, cost int, f func(lo, hi int)) {
	par.For(n, (grainElems+cost-1)/max(cost, 1), f)
}

// ParallelFor is the loop graph's own kernels split their rows with, for the
// kernels of ops defined in other packages: it calls f on ranges [lo, hi)
// covering [0, n), in parallel over GOMAXPROCS goroutines when there is
// enough work, where each index stands for cost elements of work. The calls
// may run at the same time, so f must write only what its range owns; which
// goroutine computes an index never changes what it computes.
func ParallelFor(n, cost int, f func(lo, hi int)) { forElems(n, cost, f) }

// forSpans calls f on ranges covering [0, n) that start at multiples of 64
// elements, in parallel when there is enough work: a vector kernel then
// takes the same blocks (and leaves the same tail to scalar code) however
// the work is split.
func forSpans(n int, f func(lo, hi int)) {
	forElems((n+63)/64, 64, func(lo, hi int) { f(lo*64, min(hi*64, n)) })
}

// forRows calls f on ranges of the rows of x (rows of n elements), in
// parallel when there is enough work.
func forRows[T Float](x []T, n int, f func(lo, hi int)) {
	if n > 0 {
		forElems(len(x)/n, n, f)
	}
}

// scratch holds buffers that kernels borrow for the length of one run
// (getScratch, scratch.Put), so that steady runs allocate nothing.
var scratch sync.Pool // of *[]float32 and *[]float64

// getScratch borrows a buffer of n elements of type T, not cleared; give it
// back with scratch.Put.
func getScratch[T Float](n int) *[]T {
	b, _ := scratch.Get().(*[]T)
	if b == nil || cap(*b) < n {
		s := make([]T, n)
		return &s
	}
	*b = (*b)[:n]
	return b
}
