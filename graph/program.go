package graph

import (
	"runtime"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Program is a built graph compiled for a TapeMachine: set its inputs, Run it,
// then read the loss, named outputs and (for a program with a loss) the
// gradient of the loss with respect to every parameter the graph uses.
type Program struct {
	g       *G.ExprGraph
	store   *Params
	ops     []*kernelOp
	nodes   map[*kernelOp]*G.Node
	planned bool
	// fresh is set while the nodes hold the tensors of the first run, which
	// hold a full set of activations: release lets go of them.
	fresh   bool
	layout  layout
	vm      G.VM
	inputs  map[string]*G.Node
	params  []string
	grads   []*G.Node
	outputs map[string]*G.Value
}

// Compile compiles the graph of s. With a (scalar) loss, the program also
// computes the loss's symbolic gradient (gorgonia.Grad) with respect to every
// parameter node of the graph. outputs are nodes to read after each run.
func Compile(s *Scope, loss *G.Node, outputs map[string]*G.Node) (*Program, error) {
	if err := s.Err(); err != nil {
		return nil, errors.Wrap(err, "building the graph")
	}
	p := &Program{g: s.b.g, store: s.b.params, inputs: s.b.inputs, outputs: map[string]*G.Value{}}
	if loss != nil {
		if err := p.differentiate(s, loss); err != nil {
			return nil, err
		}
	}
	for name, n := range outputs {
		if n == nil {
			return nil, errors.Errorf("output %s is nil", name)
		}
		v := new(G.Value)
		G.Read(n, v)
		p.outputs[name] = v
	}
	p.nodes = map[*kernelOp]*G.Node{}
	for _, n := range s.b.g.AllNodes() {
		if op, ok := n.Op().(*kernelOp); ok {
			if _, dup := p.nodes[op]; dup {
				return nil, errors.Errorf("op %s is used by two nodes", op.def.Name)
			}
			p.nodes[op] = n
			p.ops = append(p.ops, op)
		}
	}
	p.vm = G.NewTapeMachine(s.b.g)
	return p, nil
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
	grads, err := G.Grad(loss, wrt...)
	if err != nil {
		return errors.Wrap(err, "differentiating the loss")
	}
	p.grads = grads
	lv := new(G.Value)
	G.Read(loss, lv)
	p.outputs[lossKey] = lv
	return nil
}

// lossKey names the loss among a program's outputs.
const lossKey = "loss"

// Set copies data ([]int for int inputs, []float32 or []float64 for float
// inputs) into the named input.
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
// allocate nothing. All programs of a parameter store lay their tensors out
// in the same memory, so outputs, the loss and gradients read from a program
// stay valid only until the next run of any program of its parameter store.
func (p *Program) Run() error {
	if a := p.store.active; a != p {
		if a != nil {
			a.release()
		}
		if p.planned {
			p.store.arena.bind(p.layout)
		}
		p.store.active = p
	}
	defer p.vm.Reset()
	if p.planned {
		return errors.Wrap(p.vm.RunAll(), "running the program")
	}
	return p.firstRun()
}

// firstRun runs the program with every op writing a tensor of its own, in
// the order it records, then plans where the outputs lie in the arena from
// then on (see plan) and binds them there.
func (p *Program) firstRun() error {
	var trace []*kernelOp
	for _, op := range p.ops {
		op.trace = &trace
	}
	err := p.vm.RunAll()
	for _, op := range p.ops {
		op.trace = nil
	}
	if err != nil {
		return errors.Wrap(err, "running the program")
	}
	p.layout = plan(p.g, p.ops, p.nodes, trace, p.grads)
	p.planned, p.fresh = true, true
	p.store.arena.bind(p.layout)
	return nil
}

// release lets go of the program's tensors in the arena, which the next
// program will overwrite, and of those its first run allocated.
func (p *Program) release() {
	for _, op := range p.ops {
		if p.fresh && op.out != nil {
			// The node still holds its first-run tensor: bind it to its
			// slot instead (same shape and type, so this cannot fail).
			_ = G.UnsafeLet(p.nodes[op], op.out)
		}
		op.out = nil
	}
	if p.fresh {
		// A first run allocated a full set of activations, now garbage:
		// collect it now rather than let the heap grow to twice its size.
		p.fresh = false
		runtime.GC()
	}
	for _, v := range p.outputs {
		*v = nil
	}
}

// Loss is the loss of the last run.
func (p *Program) Loss() float64 {
	v, ok := p.outputs[lossKey]
	if !ok || *v == nil {
		return 0
	}
	switch l := (*v).(type) {
	case *G.F32:
		return float64(*l)
	case *G.F64:
		return float64(*l)
	case *tensor.Dense:
		if v := Float64s(l); len(v) == 1 {
			return v[0]
		}
	}
	return 0
}

// Output is the value of the named output after the last run, nil before the
// first run or for an unknown name. It is overwritten by the next run.
func (p *Program) Output(name string) *tensor.Dense {
	v, ok := p.outputs[name]
	if !ok || *v == nil {
		return nil
	}
	t, _ := (*v).(*tensor.Dense)
	return t
}

// ParamNames lists the parameters the program differentiates, in the order of Grad.
func (p *Program) ParamNames() []string { return p.params }

// Grad is the gradient of the loss with respect to the named parameter after the
// last run, nil if the program does not differentiate it. It is overwritten by
// the next run.
func (p *Program) Grad(name string) *tensor.Dense {
	for i, n := range p.params {
		if n == name {
			t, _ := p.grads[i].Value().(*tensor.Dense)
			return t
		}
	}
	return nil
}

// Close releases the machine's resources.
func (p *Program) Close() error {
	if p.store.active == p {
		p.store.active = nil
	}
	p.release()
	return p.vm.Close()
}
