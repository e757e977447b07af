package graph

import (
	"maps"
	"slices"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Gradients are gradients of parameters where a runtime keeps them: a
// program's own after a run (Program), or sums of them over batches
// (GradSums). Runtime.Adam and SumSquares read them where they lie, on the
// host or on a device, so an optimizer is written once for every runtime.
type Gradients interface {
	// Runtime is the runtime that keeps the gradients.
	Runtime() *Runtime
	// ParamNames are the parameters whose gradients these are, in order.
	ParamNames() []string
	// SumSquares is Σ g² over every element of every gradient, computed
	// where they lie in a fixed order: the same bits for the same
	// gradients.
	SumSquares() (float64, error)
	// gradSet are the gradients of ParamNames, in order.
	gradSet() (gradSet, error)
}

// gradSet are gradients of names: host tensors on the CPU, device
// addresses and sizes on a device.
type gradSet struct {
	names []string
	host  []*tensor.Dense
	dev   []DevicePtr
	sizes []int
}

// gradSet are the gradients of every parameter after the program's last
// run.
func (p *Program) gradSet() (gradSet, error) {
	if !p.ran {
		return gradSet{}, errors.New("the program has not run since it or another program of its runtime last did")
	}
	return p.exec.grads()
}

// SumSquares is Σ g² over the gradients of the program's last run,
// computed where they lie.
func (p *Program) SumSquares() (float64, error) {
	g, err := p.gradSet()
	if err != nil {
		return 0, errors.Wrap(err, "sum of squares")
	}
	sq, err := p.rt.at.sumSquares(g)
	return sq, errors.Wrap(err, "sum of squares")
}

// sums are a target's sums of gradients (GradSums).
type sums interface {
	zero() error
	add(g gradSet, scale float64) error
	gradSet() gradSet
	appendHost(buf any) (any, error)
	setHost(buf any) error
	close() error
}

// GradSums are sums of gradients of parameters, one per parameter, where a
// runtime keeps them: the trainer's Σ_b n_b·∇L_b over a step's batches b of
// n_b tokens. Zero, Add each batch, then SumSquares and Runtime.Adam; on a
// device nothing crosses to the host but the sum of squares (and the sums
// themselves by AppendHost and SetHost, for an all-reduce on the host).
type GradSums struct {
	rt    *Runtime
	names []string
	s     sums
}

// NewGradSums returns zero sums of the gradients of the named parameters of
// params, kept where the runtime runs its programs, in the order of names.
// Close frees them.
func (rt *Runtime) NewGradSums(params *Params, names []string) (*GradSums, error) {
	for _, name := range names {
		if params.Shape(name) == nil {
			return nil, errors.Errorf("gradient sums: no parameter %s", name)
		}
	}
	s, err := rt.at.newSums(params, names)
	if err != nil {
		return nil, errors.Wrap(err, "gradient sums")
	}
	return &GradSums{rt: rt, names: names, s: s}, nil
}

// Runtime is the runtime that keeps the sums.
func (g *GradSums) Runtime() *Runtime { return g.rt }

// ParamNames are the parameters whose gradients the sums sum, in order.
func (g *GradSums) ParamNames() []string { return g.names }

// Zero sets the sums to zero.
func (g *GradSums) Zero() error { return errors.Wrap(g.s.zero(), "zeroing the gradient sums") }

// Add adds scale times the gradients of p's last run to the sums: p must run
// on the sums' runtime, and the sums hold every parameter it
// differentiates.
func (g *GradSums) Add(p *Program, scale float64) error {
	if p.rt != g.rt {
		return errors.New("adding gradients: the program runs on another runtime than the sums")
	}
	grads, err := p.gradSet()
	if err != nil {
		return errors.Wrap(err, "adding gradients")
	}
	return errors.Wrap(g.s.add(grads, scale), "adding gradients")
}

// SumSquares is Σ g² over every element of every sum, in a fixed order.
func (g *GradSums) SumSquares() (float64, error) {
	sq, err := g.rt.at.sumSquares(g.s.gradSet())
	return sq, errors.Wrap(err, "sum of squares")
}

// gradSet are the sums, in the order of their names.
func (g *GradSums) gradSet() (gradSet, error) { return g.s.gradSet(), nil }

// AppendHost appends the sums to buf ([]float32 or []float64, the
// parameters' type; nil to start one), in the order of their names, copied
// from the device if they lie there.
func (g *GradSums) AppendHost(buf any) (any, error) {
	b, err := g.s.appendHost(buf)
	return b, errors.Wrap(err, "copying the gradient sums to the host")
}

// SetHost sets the sums to the first elements of buf, laid out as
// AppendHost appends them.
func (g *GradSums) SetHost(buf any) error {
	return errors.Wrap(g.s.setHost(buf), "setting the gradient sums")
}

// Close frees the sums' memory.
func (g *GradSums) Close() error { return errors.Wrap(g.s.close(), "freeing the gradient sums") }

// size is the number of elements of gradient i.
func (s gradSet) size(i int) int {
	if s.host != nil {
		return s.host[i].Shape().TotalSize()
	}
	return s.sizes[i]
}

// gradNode is the node of the named parameter's gradient, nil if none.
func (p *Program) gradNode(name string) *G.Node {
	if i, ok := p.gradIndex[name]; ok {
		return p.grads[i]
	}
	return nil
}

// HostGradients are gradients on the host, by parameter name (as one
// computes them by hand, say), for a runtime on the CPU: Runtime.Adam and
// SumSquares take them in the order of their sorted names.
func HostGradients(grads map[string]*tensor.Dense) Gradients {
	h := hostGradients{g: gradSet{names: slices.Sorted(maps.Keys(grads))}}
	for _, name := range h.g.names {
		h.g.host = append(h.g.host, grads[name])
	}
	return h
}

// hostGradients are HostGradients.
type hostGradients struct{ g gradSet }

func (h hostGradients) Runtime() *Runtime    { return CPU() }
func (h hostGradients) ParamNames() []string { return h.g.names }

func (h hostGradients) SumSquares() (float64, error) { return (&hostTarget{}).sumSquares(h.g) }

func (h hostGradients) gradSet() (gradSet, error) { return h.g, nil }
