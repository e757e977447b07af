package graph

import (
	"math"
	"reflect"
	"sort"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// arena is the memory in which the programs of a runtime lay out the
// outputs of their ops. Only one program runs at a time and what a program
// computed is valid only until another one runs (see Program.Run), so all of
// them share one block per element type, as large as the largest needs:
// compiling a program per batch shape costs no more memory than the largest.
type arena struct {
	f32  []float32
	f64  []float64
	ints []int // dropout masks
	// users are the programs bound to the arena and not closed: after a
	// run their nodes hold tensors in it, so when the arena grows they are
	// moved to the new block, which lets the old one be collected.
	users map[*Program]bool
}

// slot is where one op's output lies in the arena.
type slot struct {
	op    *kernelOp
	shape tensor.Shape
	dtype tensor.Dtype
	off   int
	// nodes hold the slot's tensor after a run: the op's node and those of
	// Gorgonia's ops that write it in place (see plan).
	nodes G.Nodes
}

// layout is the arena layout of a program's ops: one slot per op with a
// tensor output, and the elements needed of each type.
type layout struct {
	slots          []slot
	f32, f64, ints int
}

// align keeps every slot on a 64-byte boundary (for the vector kernels).
const align = 16

// bind grows the arena to what p's layout needs and gives every op of p its
// output tensor in it. The arena grows by an eighth more than needed, so
// that programs of slightly larger shapes do not each replace it; the nodes
// of its other users then move to the new block (see move).
func (a *arena) bind(p *Program) {
	l := p.layout
	grown := false
	if len(a.f32) < l.f32 {
		a.f32, grown = make([]float32, l.f32+l.f32/8), true
	}
	if len(a.f64) < l.f64 {
		a.f64, grown = make([]float64, l.f64+l.f64/8), true
	}
	if len(a.ints) < l.ints {
		a.ints, grown = make([]int, l.ints+l.ints/8), true
	}
	if a.users == nil {
		a.users = map[*Program]bool{}
	}
	for u := range a.users {
		if grown && u != p {
			a.move(u)
		}
	}
	a.users[p] = true
	for _, s := range l.slots {
		s.op.out = a.tensor(s)
	}
}

// move binds the nodes of u, a program that is not running (whose values
// are stale), to its slots in the arena's current block.
func (a *arena) move(u *Program) {
	for _, s := range u.layout.slots {
		t := a.tensor(s)
		for _, n := range s.nodes {
			if n.Value() != nil && n.Shape().Eq(s.shape) && n.Dtype() == s.dtype {
				_ = G.UnsafeLet(n, t) // same shape and type: cannot fail
			}
		}
	}
}

// tensor is the tensor of slot s in the arena.
func (a *arena) tensor(s slot) *tensor.Dense {
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
	return tensor.New(tensor.WithShape(s.shape.Clone()...), tensor.WithBacking(backing))
}

// storage is the memory of one op's output during a run: from the step at
// which the op writes it to the last step at which anything reads it, or
// writes into it (Gorgonia's own ops may, see plan).
type storage struct {
	op         *kernelOp
	nodes      G.Nodes // the op's and those writing its output in place
	start, end int
	elems      int
	off        int // in the arena, once placed
}

// forever is the end of a storage read after the run (outputs, gradients).
const forever = math.MaxInt

// plan lays out the outputs of the program's ops in the arena, from the
// program Gorgonia compiled, before it ever runs: two outputs share memory
// when no step of the run needs both.
//
// The TapeMachine runs the graph's nodes in order (Gorgonia's topological
// sort, reversed, as its compiler does), one instruction per node, and keeps
// each node's value in a register, regs[n]. Our ops always write their own
// tensor (kernelOp.Do), so each starts a register of its own. Gorgonia's ops
// write into a fresh tensor, except that an op which overwrites an input
// (OverwritesInput ≥ 0, such as the `+` nodes G.Grad adds to sum gradients)
// is given that input's register when the input is not read after it, and
// then writes in place into the input's memory: our op's output, when the
// register is one of ours. So an output's memory is in use from its op's step
// to the last step that reads any node of its register; and since a
// Gorgonia op's value may also be a view of its inputs, its readers read its
// inputs' memory too (see storages.end). keep are nodes read after the run.
func plan(g *G.ExprGraph, order G.Nodes, regs map[*G.Node]any, keep G.Nodes) (layout, error) {
	st := storages{g: g, step: map[*G.Node]int{}, keep: map[*G.Node]bool{}, reach: map[*G.Node]int{}}
	for i, n := range order {
		st.step[n] = i
	}
	for _, n := range keep {
		st.keep[n] = true
	}
	byReg, err := registers(order, regs)
	if err != nil {
		return layout{}, err
	}
	var stores []*storage
	for _, class := range byReg {
		op, ok := class[0].Op().(*kernelOp)
		if !ok || op.shape.IsScalar() && !op.def.IntOutput {
			continue // not our memory, or a scalar kept beside the arena
		}
		s := &storage{op: op, nodes: class, start: st.step[class[0]], elems: op.shape.TotalSize()}
		for _, n := range class {
			s.end = max(s.end, st.end(n))
		}
		stores = append(stores, s)
	}
	var l layout
	l.slots = append(place(stores, tensor.Float32, &l.f32), place(stores, tensor.Float64, &l.f64)...)
	l.slots = append(l.slots, place(stores, tensor.Int, &l.ints)...)
	return l, nil
}

// registers groups the nodes of order by register, each group in order, the
// groups in the order of their first node, and checks what plan assumes of
// Gorgonia's compiler: a node shares a register only with the input it
// overwrites, our ops' nodes never, and new registers are numbered in order
// (so order is the order in which the machine runs the nodes).
func registers(order G.Nodes, regs map[*G.Node]any) ([]G.Nodes, error) {
	index := map[any]int{}
	var classes []G.Nodes
	last := -1
	for _, n := range order {
		r, ok := regs[n]
		if !ok {
			continue // a statement, which writes no register
		}
		i, seen := index[r]
		if !seen {
			id, err := registerID(r)
			if err != nil {
				return nil, err
			}
			if id <= last {
				return nil, errors.Errorf("node %v has register %v after one numbered %d: not the compiler's order", n, r, last)
			}
			last = id
			index[r] = len(classes)
			classes = append(classes, G.Nodes{n})
			continue
		}
		if err := overwrites(n, r, regs); err != nil {
			return nil, err
		}
		classes[i] = append(classes[i], n)
	}
	return classes, nil
}

// overwrites checks that n, which writes register r after another node,
// overwrites its input held in r.
func overwrites(n *G.Node, r any, regs map[*G.Node]any) error {
	if _, ours := n.Op().(*kernelOp); ours || n.Op() == nil {
		return errors.Errorf("node %v shares register %v with an earlier node: Gorgonia merged two nodes of equal hash", n, r)
	}
	if x := overwritten(n); x == nil || regs[x] != r {
		return errors.Errorf("node %v (%v) writes register %v of a node it does not overwrite", n, n.Op(), r)
	}
	return nil
}

// overwritten is the input n's op overwrites, nil if none.
func overwritten(n *G.Node) *G.Node {
	i := n.Op().OverwritesInput()
	if in := children(n); i >= 0 && i < len(in) {
		return in[i]
	}
	return nil
}

// registerID is the number of a TapeMachine register (Gorgonia's unexported
// register{id int; device Device}), which must be on the CPU.
func registerID(r any) (int, error) {
	v := reflect.ValueOf(r)
	if v.Kind() != reflect.Struct {
		return 0, errors.Errorf("register %v is a %T", r, r)
	}
	id, dev := v.FieldByName("id"), v.FieldByName("device")
	if id.Kind() != reflect.Int || dev.Kind() != reflect.Int || dev.Int() != int64(G.CPU) {
		return 0, errors.Errorf("register %v: want an id on the CPU", r)
	}
	return int(id.Int()), nil
}

// storages computes how long the values of a program's nodes are read.
type storages struct {
	g     *G.ExprGraph
	step  map[*G.Node]int // step at which the machine runs each node
	keep  map[*G.Node]bool
	reach map[*G.Node]int
}

// end is the last step at which n's value, or memory it lies in, is read:
// by any node reading n and, when that node is one of Gorgonia's ops, as late
// as its own value is read (its value may lie in n's memory: written in place
// or a view). A node kept, or one of Gorgonia's that nothing reads, is read
// after the run.
func (st *storages) end(n *G.Node) int {
	if t, ok := st.reach[n]; ok {
		return t
	}
	end, readers := st.step[n], 0
	for it := st.g.To(n.ID()); it.Next(); {
		r := it.Node().(*G.Node)
		readers++
		end = max(end, st.step[r])
		if _, ours := r.Op().(*kernelOp); !ours {
			end = max(end, st.end(r))
		}
	}
	if _, ours := n.Op().(*kernelOp); st.keep[n] || readers == 0 && !ours {
		end = forever
	}
	st.reach[n] = end
	return end
}

// place gives each storage of type dt an offset, largest first, at the lowest
// offset free of every storage placed before whose life overlaps its own, and
// sets *total to the elements needed.
func place(stores []*storage, dt tensor.Dtype, total *int) []slot {
	var mine []*storage
	for _, s := range stores {
		if s.op.outType == dt {
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
		slots = append(slots, slot{op: s.op, shape: s.op.shape.Clone(), dtype: dt, off: s.off, nodes: s.nodes})
	}
	return slots
}

// padded rounds n up to a multiple of align.
func padded(n int) int { return (n + align - 1) / align * align }
