package graph

import (
	"slices"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// OwnMemory makes every op of p write, from its next run, a tensor of its
// own (on) or its slot in the planned arena (off).
func OwnMemory(p *Program, on bool) { p.ownMemory(on) }

// SetGrain sets the least number of elements a kernel hands to another
// goroutine and returns the previous one.
func SetGrain(n int) int {
	old := grainElems
	grainElems = n
	return old
}

// BlindPlan lays p out, from its next run, as if Gorgonia's ops always wrote
// fresh memory (see blindPlan).
func BlindPlan(p *Program) error {
	l, err := blindPlan(p.g, p)
	p.ownMemory(false)
	p.layout = l
	return err
}

// blindPlan lays out p's ops as if Gorgonia's ops always wrote fresh
// memory: an output lives from its op's step to the step of its last reader,
// or for ever if it is a gradient.
func blindPlan(g *G.ExprGraph, p *Program) (layout, error) {
	order, err := G.Sort(g)
	if err != nil {
		return layout{}, err
	}
	slices.Reverse(order)
	step := map[*G.Node]int{}
	for i, n := range order {
		step[n] = i
	}
	var stores []*storage
	for _, n := range order {
		op, ok := n.Op().(*kernelOp)
		if !ok || op.shape.IsScalar() && !op.def.IntOutput {
			continue
		}
		s := &storage{op: op, start: step[n], end: step[n], elems: op.shape.TotalSize()}
		for it := g.To(n.ID()); it.Next(); {
			s.end = max(s.end, step[it.Node().(*G.Node)])
		}
		if slices.Contains(p.grads, n) {
			s.end = forever
		}
		stores = append(stores, s)
	}
	var l layout
	l.slots = append(place(stores, tensor.Float32, &l.f32), place(stores, tensor.Float64, &l.f64)...)
	l.slots = append(l.slots, place(stores, tensor.Int, &l.ints)...)
	return l, nil
}

// NewTestParams is newTestParams, for the external tests.
func NewTestParams(t *testing.T, dt tensor.Dtype) *Params { return newTestParams(t, dt) }

// Total is total, an op without device kernels, for the external tests.
func Total(s *Scope, x *G.Node) *G.Node { return total(s, x) }

// KeyMask is keyMask, for the external tests.
func KeyMask() *tensor.Dense { return keyMask() }

// LossOf is lossOf, for the external tests.
func LossOf(t testing.TB, p *Program) float64 { return lossOf(t, p) }
