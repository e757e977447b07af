package graph

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"gorgonia.org/tensor"
)

// visit is one call of a bcast walk, with its slices copied.
type visit struct {
	out, n      int
	off, stride []int
}

// elements lists, for each output element the walk reaches, its offset in
// every operand.
func elements(walk func(func(int, []int, []int, int))) map[int][]int {
	seen := map[int][]int{}
	walk(func(o int, off, st []int, n int) {
		for j := range n {
			at := make([]int, len(off))
			for k := range off {
				at[k] = off[k] + j*st[k]
			}
			seen[o+j] = at
		}
	})
	return seen
}

// randomBroadcast is an output shape and two operand shapes that broadcast
// to it, with axes of size 1 and missing axes.
func randomBroadcast(rng *rand.Rand) (tensor.Shape, tensor.Shape, tensor.Shape) {
	dims := 1 + rng.IntN(4)
	out := make(tensor.Shape, dims)
	for i := range out {
		out[i] = 1 + rng.IntN(4)
	}
	operand := func() tensor.Shape {
		s := out[rng.IntN(dims):].Clone()
		for i := range s {
			if rng.IntN(3) == 0 {
				s[i] = 1
			}
		}
		return s
	}
	return out, operand(), operand()
}

// TestBcastPartsMatchTheWhole checks that eachIn over any cut of the output,
// and columns over any cut of the runs, reach every element once with the
// operand offsets each gives it.
func TestBcastPartsMatchTheWhole(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 300 {
		out, a, b := randomBroadcast(rng)
		p := newBcast(out, a, b)
		name := fmt.Sprintf("%v from %v and %v", out, a, b)
		want := elements(p.each)
		if len(want) != p.total {
			t.Fatalf("%s: each reaches %d of %d elements", name, len(want), p.total)
		}
		cuts := []int{0, p.total}
		for range rng.IntN(4) {
			cuts = append(cuts, rng.IntN(p.total+1))
		}
		slices.Sort(cuts)
		got := map[int][]int{}
		for i := 1; i < len(cuts); i++ {
			for o, at := range elements(func(f func(int, []int, []int, int)) { p.eachIn(cuts[i-1], cuts[i], f) }) {
				if _, dup := got[o]; dup || o < cuts[i-1] || o >= cuts[i] {
					t.Fatalf("%s: eachIn(%d, %d) reaches element %d", name, cuts[i-1], cuts[i], o)
				}
				got[o] = at
			}
		}
		for o, at := range want {
			if !slices.Equal(got[o], at) {
				t.Fatalf("%s cut at %v: element %d at %v, want %v", name, cuts, o, got[o], at)
			}
		}
		c := rng.IntN(p.runLen() + 1)
		cols := elements(func(f func(int, []int, []int, int)) { p.columns(0, c, f) })
		for o, at := range elements(func(f func(int, []int, []int, int)) { p.columns(c, p.runLen(), f) }) {
			cols[o] = at
		}
		if len(cols) != len(want) {
			t.Fatalf("%s: columns cut at %d reach %d of %d elements", name, c, len(cols), len(want))
		}
		for o, at := range want {
			if !slices.Equal(cols[o], at) {
				t.Fatalf("%s: columns cut at %d: element %d at %v, want %v", name, c, o, cols[o], at)
			}
		}
	}
}
