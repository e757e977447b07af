package graph

import (
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// arena is the memory in which the programs of a parameter store lay out the
// outputs of their ops. Only one program runs at a time and what a program
// computed is valid only until another one runs (see Program.Run), so all of
// them share one block per element type, as large as the largest needs:
// compiling a program per batch shape costs no more memory than the largest.
type arena struct {
	f32 []float32
	f64 []float64
}

// slot is where one op's output lies in the arena.
type slot struct {
	op    *kernelOp
	shape tensor.Shape
	dtype tensor.Dtype
	off   int
}

// layout is the arena layout of a program's ops: one slot per op, and the
// elements needed of each type.
type layout struct {
	slots    []slot
	f32, f64 int
}

// align keeps every slot on a 64-byte boundary (for the vector kernels).
const align = 16

// plan lays out the outputs of the ops of g's nodes one after another, each
// with the shape and type inferred when the graph was built. Ops with scalar
// results, which allocate nothing, are left out.
func plan(g *G.ExprGraph) (layout, []*kernelOp) {
	var l layout
	var ops []*kernelOp
	seen := map[*kernelOp]bool{}
	for _, n := range g.AllNodes() {
		op, ok := n.Op().(*kernelOp)
		if !ok || seen[op] {
			continue
		}
		seen[op] = true
		ops = append(ops, op)
		if op.scalar != nil {
			continue
		}
		size := (n.Shape().TotalSize() + align - 1) / align * align
		s := slot{op: op, shape: n.Shape().Clone(), dtype: n.Dtype()}
		switch s.dtype {
		case tensor.Float32:
			s.off, l.f32 = l.f32, l.f32+size
		case tensor.Float64:
			s.off, l.f64 = l.f64, l.f64+size
		default:
			continue
		}
		l.slots = append(l.slots, s)
	}
	return l, ops
}

// bind grows the arena to what l needs and gives every op of l its output
// tensor in it. The arena grows by an eighth more than needed, so that
// programs of slightly larger shapes do not each replace it (the nodes of
// programs that have not run since keep the old block alive).
func (a *arena) bind(l layout) {
	if len(a.f32) < l.f32 {
		a.f32 = make([]float32, l.f32+l.f32/8)
	}
	if len(a.f64) < l.f64 {
		a.f64 = make([]float64, l.f64+l.f64/8)
	}
	for _, s := range l.slots {
		end := s.off + s.shape.TotalSize()
		var backing any
		if s.dtype == tensor.Float32 {
			backing = a.f32[s.off:end:end]
		} else {
			backing = a.f64[s.off:end:end]
		}
		s.op.out = tensor.New(tensor.WithShape(s.shape.Clone()...), tensor.WithBacking(backing))
	}
}
