package graph

import (
	"math"
	"sort"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// arena is the memory in which the programs of a parameter store lay out the
// outputs of their ops. Only one program runs at a time and what a program
// computed is valid only until another one runs (see Program.Run), so all of
// them share one block per element type, as large as the largest needs:
// compiling a program per batch shape costs no more memory than the largest.
type arena struct {
	f32  []float32
	f64  []float64
	ints []int // dropout masks
}

// slot is where one op's output lies in the arena.
type slot struct {
	op    *kernelOp
	shape tensor.Shape
	dtype tensor.Dtype
	off   int
}

// layout is the arena layout of a program's ops: one slot per op with a
// tensor output, and the elements needed of each type.
type layout struct {
	slots          []slot
	f32, f64, ints int
}

// align keeps every slot on a 64-byte boundary (for the vector kernels).
const align = 16

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
	if len(a.ints) < l.ints {
		a.ints = make([]int, l.ints+l.ints/8)
	}
	for _, s := range l.slots {
		end := s.off + s.shape.TotalSize()
		var backing any
		switch s.dtype {
		case tensor.Float32:
			backing = a.f32[s.off:end:end]
		case tensor.Float64:
			backing = a.f64[s.off:end:end]
		default:
			backing = a.ints[s.off:end:end]
		}
		s.op.out = tensor.New(tensor.WithShape(s.shape.Clone()...), tensor.WithBacking(backing))
	}
}

// storage is the memory of one op's output during a run: from the step at
// which the op writes it to the last step at which anything reads it. Gorgonia's
// own ops (the sums G.Grad adds) may write into it too, after its op's last
// reader, which lengthens its life.
type storage struct {
	op         *kernelOp
	start, end int
	addr, size uintptr
	elems      int
	off        int // in the arena, once placed
}

// planner computes lifetimes over a program's graph after its first run.
type planner struct {
	g    *G.ExprGraph
	when map[*G.Node]int // step at which each of our ops' nodes ran
	keep map[*G.Node]bool
	last map[*G.Node]int
}

// forever is the end of a storage read after the run (outputs, gradients).
const forever = math.MaxInt

// plan lays out the program's op outputs in the arena after its first run,
// in which every op wrote a tensor of its own: two outputs share memory when
// no step of the run needs both. trace is the order in which the ops ran;
// keep are nodes read after the run (the gradients).
func plan(g *G.ExprGraph, ops []*kernelOp, nodes map[*kernelOp]*G.Node, trace []*kernelOp, keep G.Nodes) layout {
	pl := planner{g: g, when: map[*G.Node]int{}, keep: map[*G.Node]bool{}, last: map[*G.Node]int{}}
	for i, op := range trace {
		pl.when[nodes[op]] = i
	}
	for _, n := range keep {
		pl.keep[n] = true
	}
	var stores []*storage
	for _, op := range ops {
		if op.out == nil {
			continue
		}
		n := nodes[op]
		stores = append(stores, &storage{op: op, start: pl.when[n], end: pl.lastUse(n),
			addr: op.out.Uintptr(), size: op.out.MemSize(), elems: op.out.Shape().TotalSize()})
	}
	pl.lengthenAliased(stores)
	var l layout
	l.slots = append(place(stores, tensor.Float32, &l.f32), place(stores, tensor.Float64, &l.f64)...)
	l.slots = append(l.slots, place(stores, tensor.Int, &l.ints)...)
	return l
}

// lastUse is the last step at which n's value is read: by one of our ops, by
// a Gorgonia op (as late as that op's own value is read), or after the run.
// A node nothing reads is read after the run (G.Read and nodes kept), unless
// it is one of our ops' nodes.
func (pl *planner) lastUse(n *G.Node) int {
	if t, ok := pl.last[n]; ok {
		return t
	}
	end, readers := -1, 0
	if t, ok := pl.when[n]; ok {
		end = t
	}
	if pl.keep[n] {
		end = forever
	}
	for it := pl.g.To(n.ID()); it.Next(); {
		r := it.Node().(*G.Node)
		readers++
		if t, ok := pl.when[r]; ok {
			end = max(end, t)
		} else {
			end = max(end, pl.lastUse(r))
		}
	}
	if _, ours := pl.when[n]; readers == 0 && !ours {
		end = forever
	}
	pl.last[n] = end
	return end
}

// lengthenAliased finds the nodes of Gorgonia's ops whose values lie in one of
// our ops' outputs (the machine reuses memory it thinks is free) and
// lengthens that storage's life to theirs.
func (pl *planner) lengthenAliased(stores []*storage) {
	byAddr := append([]*storage(nil), stores...)
	sort.Slice(byAddr, func(i, j int) bool { return byAddr[i].addr < byAddr[j].addr })
	for _, n := range pl.g.AllNodes() {
		if _, ours := pl.when[n]; ours || n.Op() == nil {
			continue
		}
		t, ok := n.Value().(*tensor.Dense)
		if !ok || t.MemSize() == 0 {
			continue
		}
		a := t.Uintptr()
		i := sort.Search(len(byAddr), func(i int) bool { return byAddr[i].addr > a }) - 1
		if i >= 0 && a < byAddr[i].addr+byAddr[i].size {
			byAddr[i].end = max(byAddr[i].end, pl.lastUse(n))
		}
	}
}

// place gives each storage of type dt an offset, largest first, at the lowest
// offset free of every storage placed before whose life overlaps its own, and
// sets *total to the elements needed.
func place(stores []*storage, dt tensor.Dtype, total *int) []slot {
	var mine []*storage
	for _, s := range stores {
		if s.op.out.Dtype() == dt {
			mine = append(mine, s)
		}
	}
	sort.SliceStable(mine, func(i, j int) bool { return mine[i].elems > mine[j].elems })
	type span struct{ off, end int }
	var placed []*storage
	slots := make([]slot, 0, len(mine))
	for _, s := range mine {
		var busy []span
		for _, p := range placed {
			if p.start <= s.end && s.start <= p.end {
				busy = append(busy, span{p.off, p.off + padded(p.elems)})
			}
		}
		sort.Slice(busy, func(i, j int) bool { return busy[i].off < busy[j].off })
		for _, b := range busy {
			if s.off+padded(s.elems) <= b.off {
				break
			}
			s.off = max(s.off, b.end)
		}
		placed = append(placed, s)
		*total = max(*total, s.off+padded(s.elems))
		slots = append(slots, slot{op: s.op, shape: s.op.out.Shape().Clone(), dtype: dt, off: s.off})
	}
	return slots
}

// padded rounds n up to a multiple of align.
func padded(n int) int { return (n + align - 1) / align * align }
