package graph

import (
	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/graph/internal/par"
	"gorgonia.org/tensor"
)

// BroadcastShape is the shape two operands broadcast to, NumPy's rule: the
// shapes are aligned at their last axes, a missing axis counts as 1, and two
// sizes agree when they are equal or one of them is 1.
func BroadcastShape(a, b tensor.Shape) (tensor.Shape, error) {
	n := max(len(a), len(b))
	out := make(tensor.Shape, n)
	for i := range n {
		da, db := dimFromEnd(a, n-1-i), dimFromEnd(b, n-1-i)
		switch {
		case da == db || db == 1:
			out[i] = da
		case da == 1:
			out[i] = db
		default:
			return nil, errors.Errorf("shapes %v and %v do not broadcast (axis %d: %d against %d)", a, b, i-n, da, db)
		}
	}
	return out, nil
}

// dimFromEnd is the size of s's axis k places before the last (1 if s has
// no such axis).
func dimFromEnd(s tensor.Shape, k int) int {
	if k >= len(s) {
		return 1
	}
	return s[len(s)-1-k]
}

// bcast walks an output and the operands that broadcast to it, in runs along
// the output's innermost axes: the axes of the output, with those of size 1
// dropped and neighbours merged where every operand is laid out alike.
// Offsets are in elements; an operand's stride along an axis it broadcasts
// over is 0.
type bcast struct {
	size    []int   // merged axes
	strides [][]int // per operand, per merged axis
	total   int
}

// newBcast plans the walk of out for operands of the given shapes, each of
// which broadcasts to out.
func newBcast(out tensor.Shape, operands ...tensor.Shape) bcast {
	n := len(out)
	var p bcast
	p.total = out.TotalSize()
	p.strides = make([][]int, len(operands))
	full := make([][]int, len(operands))
	for k, s := range operands {
		full[k] = make([]int, n)
		st := 1
		for i := n - 1; i >= 0; i-- {
			if d := dimFromEnd(s, n-1-i); d != 1 {
				full[k][i] = st
				st *= d
			}
		}
	}
	for i := range n {
		if out[i] == 1 {
			continue
		}
		last := len(p.size) - 1
		if last >= 0 && mergeable(full, p.strides, i, out[i]) {
			p.size[last] *= out[i]
			for k := range operands {
				p.strides[k][last] = full[k][i]
			}
			continue
		}
		p.size = append(p.size, out[i])
		for k := range operands {
			p.strides[k] = append(p.strides[k], full[k][i])
		}
	}
	return p
}

// mergeable reports whether axis i (of size d) continues the last merged
// axis for every operand: its stride times d is the merged axis's stride
// (both 0 where the operand broadcasts over both).
func mergeable(full, merged [][]int, i, d int) bool {
	for k := range full {
		if full[k][i]*d != merged[k][len(merged[k])-1] {
			return false
		}
	}
	return true
}

// each calls f for every run along the innermost merged axis: the output's
// offset, each operand's offset and stride along the run (0 or 1), and the
// run's length.
func (p bcast) each(f func(out int, off, stride []int, n int)) { p.eachIn(0, p.total, f) }

// eachIn is each for the output's elements [lo, hi) alone: the runs that
// reach into the range, cut to it.
func (p bcast) eachIn(lo, hi int, f func(out int, off, stride []int, n int)) {
	if lo >= hi {
		return
	}
	k := len(p.strides)
	off, stride := make([]int, k), make([]int, k)
	if len(p.size) == 0 { // every axis has size 1
		f(0, off, stride, 1)
		return
	}
	last := len(p.size) - 1
	n := p.size[last]
	for j := range k {
		stride[j] = p.strides[j][last]
	}
	// The run of lo: its index along each outer axis, and the offsets.
	idx := make([]int, last)
	for a, r := last-1, lo/n; a >= 0; a-- {
		idx[a] = r % p.size[a]
		r /= p.size[a]
		for j := range k {
			off[j] += idx[a] * p.strides[j][a]
		}
	}
	for o := lo - lo%n; o < hi; o += n {
		first, end := max(lo-o, 0), min(hi-o, n)
		for j := range k {
			off[j] += first * stride[j]
		}
		f(o+first, off, stride, end-first)
		for j := range k {
			off[j] -= first * stride[j]
		}
		for a := last - 1; a >= 0; a-- {
			idx[a]++
			for j := range k {
				off[j] += p.strides[j][a]
			}
			if idx[a] < p.size[a] {
				break
			}
			for j := range k {
				off[j] -= p.strides[j][a] * idx[a]
			}
			idx[a] = 0
		}
	}
}

// parallel is each with the output cut into ranges that run on several
// goroutines (forElems), cost elements of work per element of the output: f
// may write only the output's elements of its run.
func (p bcast) parallel(cost int, f func(out int, off, stride []int, n int)) {
	forElems(p.total, cost, func(lo, hi int) { p.eachIn(lo, hi, f) })
}

// runLen is the length of the runs each walks (1 when every axis has size 1).
func (p bcast) runLen() int {
	if len(p.size) == 0 {
		return 1
	}
	return p.size[len(p.size)-1]
}

// rowsOnto reports whether the walk is rows of operand i's length, operand
// i being one row that every row of the output reaches in order: x [..., n]
// and a vector [n].
func (p bcast) rowsOnto(i int) bool {
	return len(p.size) == 2 && p.strides[i][0] == 0 && p.strides[i][1] == 1
}

// columns is each cut to the positions [c0, c1) of every run.
func (p bcast) columns(c0, c1 int, f func(out int, off, stride []int, n int)) {
	shifted := make([]int, len(p.strides))
	p.each(func(o int, off, st []int, n int) {
		for j := range off {
			shifted[j] = off[j] + c0*st[j]
		}
		f(o+c0, shifted, st, min(c1, n)-c0)
	})
}

// accumulate is each for an f that adds into operand i at its offsets,
// where runs may reach one element of it more than once, cost elements of
// work per element of the output: in parallel over the positions along the
// runs when operand i runs along them (stride 1), so that every element of
// it is summed by one goroutine, in the order of each; else on this
// goroutine alone.
func (p bcast) accumulate(i, cost int, f func(out int, off, stride []int, n int)) {
	n := p.runLen()
	if len(p.size) == 0 || p.strides[i][len(p.size)-1] != 1 {
		p.each(f)
		return
	}
	// One range of columns per goroutine: the fewer the ranges, the longer
	// the pieces of runs f gets, and how the columns are split changes
	// nothing (each element is summed in the order of each).
	parts := max(min(par.Workers(), n, cost*p.total/grainElems), 1)
	par.Do(parts, func(r int) { p.columns(n*r/parts, n*(r+1)/parts, f) })
}
