package graph

import (
	"slices"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Program is a built graph compiled for a TapeMachine: set its inputs, Run it,
// then read the loss, named outputs and (for a program with a loss) the
// gradient of the loss with respect to every parameter the graph uses.
type Program struct {
	g   *G.ExprGraph
	rt  *Runtime
	ops []*kernelOp
	// layout is where the ops' outputs lie in the arena, planned when the
	// program is compiled; own, set by tests, leaves each op writing a
	// tensor of its own instead.
	layout layout
	own    bool
	vm     G.VM
	inputs map[string]*G.Node
	params []string
	// wrt names the inputs and marked nodes (GradWRT) whose gradients
	// follow the parameters' in grads.
	wrt   []string
	grads []*G.Node
	// outputs are read after a run; ran says a run has filled them since
	// the program last became active.
	outputs map[string]output
	ran     bool
	// exec runs the program where its runtime runs programs.
	exec executor
	// gradIndex is each parameter's place in params.
	gradIndex map[string]int
}

// output is a node read after a run: its value where its op wrote it or,
// for a node that one of Gorgonia's ops reads (and may overwrite in place,
// see plan), a copy the machine makes when it has computed it (G.Read).
type output struct {
	n    *G.Node
	copy *G.Value
}

// Compile compiles the graph of s to run on rt: on its device, with its
// precision of products, in its memory (nil: a CPU runtime of the program's
// own, CPU()). With a (scalar) loss, the program also computes the loss's
// symbolic gradient (gorgonia.Grad) with respect to every parameter node of
// the graph. outputs are nodes to read after each run.
func Compile(rt *Runtime, s *Scope, loss *G.Node, outputs map[string]*G.Node) (*Program, error) {
	if err := s.Err(); err != nil {
		return nil, errors.Wrap(err, "building the graph")
	}
	if rt == nil {
		rt = CPU()
	}
	if err := rt.precision.check(s.b.params.dtype); err != nil {
		return nil, errors.Wrap(err, "compiling")
	}
	p := &Program{g: s.b.g, rt: rt, inputs: s.b.inputs, outputs: map[string]output{}}
	if loss == nil && len(s.b.gradWRT) > 0 {
		return nil, errors.Errorf("gradients with respect to %v need a loss", s.b.gradWRT)
	}
	if loss != nil {
		if err := p.differentiate(s, loss); err != nil {
			return nil, err
		}
	}
	for name, n := range outputs {
		if n == nil {
			return nil, errors.Errorf("output %s is nil", name)
		}
		p.outputs[name] = newOutput(s.b.g, n)
	}
	seen := map[*kernelOp]bool{}
	for _, n := range s.b.g.AllNodes() {
		if op, ok := n.Op().(*kernelOp); ok {
			if seen[op] {
				return nil, errors.Errorf("op %s is used by two nodes", op.def.Name)
			}
			seen[op] = true
			p.ops = append(p.ops, op)
		}
	}
	tm := G.NewTapeMachine(s.b.g, G.WithEngine(rt.at.engine()))
	p.vm = tm
	regs := nodeRegisters(tm.LocMap())
	order, err := p.plan(regs)
	if err == nil {
		p.exec, err = rt.at.compile(p, s, order, regs)
	}
	if err != nil {
		_ = tm.Close()
		return nil, err
	}
	return p, nil
}

// plan lays out the program's tensors in the arena (see plan) from the order
// in which its machine runs the graph's nodes, that of Gorgonia's compiler
// (its topological sort, reversed), and the register of each node; it
// returns that order.
func (p *Program) plan(regs map[*G.Node]any) (G.Nodes, error) {
	order, err := G.Sort(p.g)
	if err != nil {
		return nil, errors.Wrap(err, "sorting the graph")
	}
	slices.Reverse(order)
	p.layout, err = plan(p.g, order, regs, p.kept())
	return order, errors.Wrap(err, "planning the program's memory")
}

// kept are the nodes read after a run: the gradients and the outputs.
func (p *Program) kept() G.Nodes {
	keep := slices.Clone(p.grads)
	for _, o := range p.outputs {
		keep = append(keep, o.n)
	}
	return keep
}

// nodeRegisters is the register of each node in a TapeMachine's location
// map (whose register type Gorgonia does not export).
func nodeRegisters[R comparable](locs map[*G.Node]R) map[*G.Node]any {
	regs := make(map[*G.Node]any, len(locs))
	for n, r := range locs {
		regs[n] = r
	}
	return regs
}

// differentiate adds the loss's gradient nodes to the graph.
func (p *Program) differentiate(s *Scope, loss *G.Node) error {
	if !loss.IsScalar() {
		return errors.Errorf("loss has shape %v, want a scalar", loss.Shape())
	}
	var wrt G.Nodes
	for _, name := range s.b.params.names {
		if n, ok := s.b.nodes[name]; ok {
			p.params = append(p.params, name)
			wrt = append(wrt, n)
		}
	}
	extra, err := s.b.wrtNodes()
	if err != nil {
		return err
	}
	p.wrt = s.b.gradWRT
	grads, err := G.Grad(loss, append(wrt, extra...)...)
	if err != nil {
		return errors.Wrap(err, "differentiating the loss")
	}
	p.grads = grads
	p.gradIndex = make(map[string]int, len(p.params))
	for i, name := range p.params {
		p.gradIndex[name] = i
	}
	p.outputs[LossOutput] = newOutput(s.b.g, loss)
	return nil
}

// newOutput reads n in place, unless one of Gorgonia's ops reads it.
func newOutput(g *G.ExprGraph, n *G.Node) output {
	for it := g.To(n.ID()); it.Next(); {
		if _, ours := it.Node().(*G.Node).Op().(*kernelOp); !ours {
			o := output{n: n, copy: new(G.Value)}
			G.Read(n, o.copy)
			return o
		}
	}
	return output{n: n}
}

// LossOutput names the loss among a program's outputs: the scalar Compile
// differentiates is kept under it, and an evaluation program that outputs
// its loss under it has a Loss too.
const LossOutput = "loss"

// Set copies data ([]int for int inputs, []float32 or []float64 for float
// inputs) into the named input; on a device, the input crosses there at
// the next run (an input the host has not set since keeps its device
// value, see CopyRows).
func (p *Program) Set(name string, data any) error {
	n, ok := p.inputs[name]
	if !ok {
		return errors.Errorf("program has no input %s", name)
	}
	t := n.Value().(*tensor.Dense)
	var copied, want int
	switch d := data.(type) {
	case []int:
		dst, ok := t.Data().([]int)
		if !ok {
			return errors.Errorf("input %s holds %v, given ints", name, t.Dtype())
		}
		copied, want = copy(dst, d), len(d)
	case []float32:
		dst, ok := t.Data().([]float32)
		if !ok {
			return errors.Errorf("input %s holds %v, given float32s", name, t.Dtype())
		}
		copied, want = copy(dst, d), len(d)
	case []float64:
		dst, ok := t.Data().([]float64)
		if !ok {
			return errors.Errorf("input %s holds %v, given float64s", name, t.Dtype())
		}
		copied, want = copy(dst, d), len(d)
	default:
		return errors.Errorf("input %s: cannot set from %T", name, data)
	}
	p.exec.set(n)
	if copied != want || want != t.Shape().TotalSize() {
		return errors.Errorf("input %s has shape %v (%d elements), given %d", name, t.Shape(), t.Shape().TotalSize(), want)
	}
	return nil
}

// HasInput reports whether the program has the named input.
func (p *Program) HasInput(name string) bool {
	_, ok := p.inputs[name]
	return ok
}

// Run runs the program once: forward, and backward if it has a loss.
//
// A program keeps its intermediate tensors from run to run, so repeated runs
// allocate nothing. All programs of a runtime lay their tensors out in the
// same memory, so outputs, the loss and gradients read from a program stay
// valid only until the next run of any program of its runtime.
func (p *Program) Run() error {
	p.rt.activate(p)
	if err := p.exec.run(); err != nil {
		return errors.Wrap(err, "running the program")
	}
	p.ran = true
	return nil
}

// release lets go of the program's tensors in the arena, which the next
// program will overwrite.
func (p *Program) release() {
	p.exec.release()
	p.ran = false
}

// ownMemory makes every op of p write, from its next run, a tensor of its
// own (on) or its slot in the arena (off): a reference to check the plan
// against.
func (p *Program) ownMemory(on bool) {
	if p.rt.active == p {
		p.release()
		p.rt.active = nil
	}
	p.own = on
}

// value is the value of the named output after the last run, nil before it.
func (p *Program) value(name string) G.Value {
	o, ok := p.outputs[name]
	switch {
	case !ok || !p.ran:
		return nil
	case o.copy != nil:
		return p.exec.value(o.n, *o.copy)
	}
	return p.exec.value(o.n, o.n.Value())
}

// Loss is the loss of the last run: the scalar Compile differentiated, or
// the output named LossOutput (an evaluation program's). It is an error for a
// program that has neither, before its first run, once another program of
// its runtime has run, or on a device when copying it to the host fails.
func (p *Program) Loss() (float64, error) {
	if _, ok := p.outputs[LossOutput]; !ok {
		return 0, errors.New("the program has no loss: it was compiled without one or an output named loss")
	}
	if !p.ran {
		return 0, errors.New("the program's loss is not readable: it has not run since it or another program of its runtime last did")
	}
	switch l := p.value(LossOutput).(type) {
	case *G.F32:
		return float64(*l), nil
	case *G.F64:
		return float64(*l), nil
	case *tensor.Dense:
		if v := Float64s(l); len(v) == 1 {
			return v[0], nil
		}
	}
	return 0, errors.New("the program's loss could not be read from its device")
}

// Output is the value of the named output after the last run, nil before the
// first run, once another program of its runtime has run, for an unknown
// name, or on a device when copying it to the host fails. It lies in the
// arena (a copy only if one of Gorgonia's ops reads it; on a device, copied
// there when read) and is overwritten by the next run of any program of the
// runtime.
func (p *Program) Output(name string) *tensor.Dense {
	t, _ := p.value(name).(*tensor.Dense)
	return t
}

// ParamNames lists the parameters the program differentiates, in the order of Grad.
func (p *Program) ParamNames() []string { return p.params }

// Grad is the gradient of the loss with respect to the named parameter after the
// last run, nil if the program does not differentiate it. It is overwritten by
// the next run.
func (p *Program) Grad(name string) *tensor.Dense {
	n := p.gradNode(name)
	if n == nil {
		return nil
	}
	t, _ := p.exec.value(n, n.Value()).(*tensor.Dense)
	return t
}

// Close releases the machine's resources.
func (p *Program) Close() error {
	p.rt.forget(p)
	p.release()
	err := p.exec.close()
	if verr := p.vm.Close(); err == nil {
		err = verr
	}
	return err
}
