package graph

import (
	"slices"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// GradWRT makes a program compiled from the scope also compute the loss's
// gradient with respect to the named float nodes: inputs (Scope.Input) or
// nodes a builder marked with Scope.Differentiable, such as a model's
// source embeddings. Program.InputGrad reads them after a run: saliency
// maps, probing. Compile fails if a name is neither.
func GradWRT(names ...string) Option {
	return func(b *builder) { b.gradWRT = append(b.gradWRT, names...) }
}

// Differentiable marks n, under its full name in this scope, as a node a
// program may differentiate the loss with respect to when the scope's
// GradWRT names it, and returns the node to build on in its place:
// x = s.Differentiable("embedded", x). Unless GradWRT names it, that is n
// itself, and the mark costs nothing. (Gorgonia differentiates with
// respect to its graphs' leaves only: a node asked for is returned as
// n + z, z an input of zeros, and ∂L/∂z is ∂L/∂n.)
func (s *Scope) Differentiable(name string, n *G.Node) *G.Node {
	full := s.Name(name)
	if n == nil || !slices.Contains(s.b.gradWRT, full) {
		return n
	}
	if _, ok := s.b.marked[full]; ok {
		s.Fail(errors.Errorf("differentiable node %s marked twice", full))
		return nil
	}
	v := tensor.New(tensor.Of(n.Dtype()), tensor.WithShape(n.Shape().Clone()...))
	z := G.NewTensor(s.b.g, n.Dtype(), n.Dims(), G.WithShape(n.Shape().Clone()...), G.WithName(full), G.WithValue(v))
	s.b.marked[full] = z
	return s.Add(n, z)
}

// wrtNodes are the nodes GradWRT names, in its order.
func (b *builder) wrtNodes() ([]*G.Node, error) {
	nodes := make([]*G.Node, len(b.gradWRT))
	for i, name := range b.gradWRT {
		n, ok := b.inputs[name]
		if !ok {
			n, ok = b.marked[name]
		}
		switch {
		case !ok:
			return nil, errors.Errorf("gradient with respect to %s: the graph has no input or differentiable node of that name", name)
		case n.Dtype() != b.params.dtype:
			return nil, errors.Errorf("gradient with respect to %s: it holds %v, not the graph's floats (%v)", name, n.Dtype(), b.params.dtype)
		}
		nodes[i] = n
	}
	return nodes, nil
}

// InputGrad is the gradient of the loss with respect to the named input or
// differentiable node (see GradWRT) after the last run, with its shape;
// nil if the program does not compute it, or before a run (or on a device,
// if copying it to the host fails). It is overwritten by the next run of
// any program of the runtime.
func (p *Program) InputGrad(name string) *tensor.Dense {
	for i, n := range p.wrt {
		if g := p.grads[len(p.params)+i]; n == name && p.ran {
			t, _ := p.exec.value(g, g.Value()).(*tensor.Dense)
			return t
		}
	}
	return nil
}
