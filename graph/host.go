package graph

import (
	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// executor runs one program where its runtime's target runs programs. The
// TapeMachine drives both: on the CPU the ops' kernels compute in the
// arena; on a device they launch work there, and later runs replay it.
type executor interface {
	// activate lays the program's values out in the memory it runs in, as
	// it becomes its runtime's running program; release lets go of it.
	activate()
	release()
	// set notes that the host has set the input n.
	set(n *G.Node)
	// run runs the program once.
	run() error
	// value is n's value after the last run, v being the machine's: v
	// itself on the CPU, or a host copy of n's device value (nil if the
	// copy fails).
	value(n *G.Node, v G.Value) G.Value
	// grads are the gradients of every parameter (Program.params) after
	// the last run.
	grads() (gradSet, error)
	// copyRows is CopyRows into the input in, checked, of rows of size
	// elements.
	copyRows(in *G.Node, src *Program, output string, rows []int, size int) error
	close() error
}

// nodeRunner runs one node's op: its CPU kernels, or its device kernels.
type nodeRunner interface {
	do(n *kernelOp, vals []G.Value) (G.Value, error)
}

// hostTarget runs programs on the CPU: their values in its arena, their
// products reading its packed copies of the weights.
type hostTarget struct {
	arena arena
	packs packCache
}

// hostExec runs a program on the CPU.
type hostExec struct {
	p       *Program
	t       *hostTarget
	weights []*version
}

// hostRunner runs an op's CPU kernels, its BF16 ones where the program has
// BF16 products and the op has them.
type hostRunner struct{ bf16 bool }

func (t *hostTarget) compile(p *Program, s *Scope, _ G.Nodes, _ map[*G.Node]any) (executor, error) {
	for _, op := range p.ops {
		op.run = hostRunner{bf16: p.rt.precision == BF16}
	}
	return &hostExec{p: p, t: t, weights: t.packs.open(s.b.weights)}, nil
}

func (t *hostTarget) engine() tensor.Engine { return machineEngine{} }

func (t *hostTarget) arenaBytes() int {
	return 4*len(t.arena.f32) + 8*len(t.arena.f64) + 8*len(t.arena.ints)
}

func (t *hostTarget) copiedToHost() int         { return 0 }
func (t *hostTarget) download(...*Params) error { return nil }
func (t *hostTarget) sibling() target           { return &hostTarget{} }
func (t *hostTarget) setReplays(int) error      { return nil }
func (t *hostTarget) close() error              { return nil }

func (x *hostExec) activate() {
	if !x.p.own {
		x.t.arena.bind(x.p)
	}
}

func (x *hostExec) release() {
	if !x.p.own {
		for _, op := range x.p.ops {
			op.out = nil
		}
	}
}

func (x *hostExec) set(*G.Node) {}

func (x *hostExec) run() error {
	defer x.p.vm.Reset()
	return x.p.vm.RunAll()
}

func (x *hostExec) value(_ *G.Node, v G.Value) G.Value { return v }

func (x *hostExec) grads() (gradSet, error) {
	names := x.p.params
	g := gradSet{names: names, host: make([]*tensor.Dense, len(names))}
	for i, name := range names {
		t, ok := x.p.grads[i].Value().(*tensor.Dense)
		if !ok {
			return g, errors.Errorf("the gradient of %s is not a tensor after the run", name)
		}
		g.host[i] = t
	}
	return g, nil
}

func (x *hostExec) close() error {
	delete(x.t.arena.users, x.p)
	x.t.packs.close(x.weights)
	x.weights = nil
	return nil
}

// do runs the forward kernel of the graph's type: the output is written
// into the node's own tensor (its slot in the arena), never into memory the
// machine offers, for where outputs lie is planned when a program is
// compiled (see plan), and that plan must hold at every run.
func (r hostRunner) do(n *kernelOp, vals []G.Value) (G.Value, error) {
	in, err := n.inputs(vals)
	if err != nil {
		return nil, err
	}
	// Let go of the inputs after the run: the cache must not keep another
	// program's tensors alive.
	defer clear(in)
	switch {
	case n.dtype == tensor.Float32 && r.bf16 && n.def.BF16.Forward != nil:
		return forward(n, n.def.BF16.Forward, in)
	case n.dtype == tensor.Float32:
		return forward(n, n.def.F32.Forward, in)
	}
	return forward(n, n.def.F64.Forward, in)
}
