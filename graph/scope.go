package graph

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Scope is a place in a graph under construction: the graph, the parameter
// store, a name prefix and the train/eval mode. Layers take a Scope, make their
// parameters in a child scope (In), and add their nodes with the Scope's op
// methods.
//
// The op methods record the first error and return nil from then on, so a layer
// reads like its equations; Err reports what went wrong and where
// ("decoder.layers.1.cross_attn: matmul: …") once the graph is built.
type Scope struct {
	b      *builder
	prefix string
}

// builder is the state shared by every Scope of one graph.
type builder struct {
	g        *G.ExprGraph
	params   *Params
	rng      *rand.Rand // dropout masks; nil in evaluation
	nodes    map[string]*G.Node
	inputs   map[string]*G.Node
	dropouts int
	scoring  bool
	kept     map[string]*G.Node
	// marked are the nodes marked Differentiable, and gradWRT the names
	// of those and of inputs a program differentiates the loss by.
	marked  map[string]*G.Node
	gradWRT []string
	// weights are the parameters that products read (Scope.MatMul).
	weights []*param
	err     error
}

// Option configures a new Scope.
type Option func(*builder)

// Training puts the graph in training mode: dropout is active and draws its
// masks from rng. Without it the graph is built for evaluation (no dropout).
func Training(rng *rand.Rand) Option { return func(b *builder) { b.rng = rng } }

// Scoring builds an evaluation graph that scores its targets and is not read
// otherwise: a model may then make only what scoring needs, such as the
// targets' log-probabilities (ops.TargetScores, in layers/ops) instead
// of every token's.
func Scoring() Option { return func(b *builder) { b.scoring = true } }

// NewScope starts a new graph whose parameters come from params.
func NewScope(params *Params, opts ...Option) *Scope {
	b := &builder{
		g:      G.NewGraph(),
		params: params,
		nodes:  map[string]*G.Node{},
		inputs: map[string]*G.Node{},
		kept:   map[string]*G.Node{},
		marked: map[string]*G.Node{},
	}
	for _, o := range opts {
		o(b)
	}
	return &Scope{b: b}
}

// In returns the child scope named by joining parts with dots:
// s.In("layers", 0) in "encoder" is "encoder.layers.0".
func (s *Scope) In(parts ...any) *Scope {
	names := make([]string, 0, len(parts)+1)
	if s.prefix != "" {
		names = append(names, s.prefix)
	}
	for _, p := range parts {
		names = append(names, fmt.Sprint(p))
	}
	return &Scope{b: s.b, prefix: strings.Join(names, ".")}
}

// Name is the full name of local in this scope.
func (s *Scope) Name(local string) string {
	if s.prefix == "" {
		return local
	}
	return s.prefix + "." + local
}

// Graph is the expression graph being built.
func (s *Scope) Graph() *G.ExprGraph { return s.b.g }

// Params is the parameter store.
func (s *Scope) Params() *Params { return s.b.params }

// Dtype is the element type of the graph's floats.
func (s *Scope) Dtype() tensor.Dtype { return s.b.params.dtype }

// Training reports whether the graph is built for training (dropout active).
func (s *Scope) Training() bool { return s.b.rng != nil }

// Scoring reports whether the graph is built with the option Scoring.
func (s *Scope) Scoring() bool { return s.b.scoring }

// Err is the first error met while building, naming the scope it happened in.
func (s *Scope) Err() error { return s.b.err }

// Fail records err (if it is the first) as having happened in this scope.
func (s *Scope) Fail(err error) {
	if err != nil && s.b.err == nil {
		if s.prefix != "" {
			err = errors.Wrap(err, s.prefix)
		}
		s.b.err = err
	}
}

// Param returns the node of the named parameter in this scope, creating the
// parameter with init the first time any graph asks for it. Asking twice in one
// graph gives the same node, so a weight can be shared (tied embeddings).
func (s *Scope) Param(name string, shape tensor.Shape, init Init) *G.Node {
	full := s.Name(name)
	if n, ok := s.b.nodes[full]; ok {
		if !n.Shape().Eq(shape) {
			s.Fail(errors.Errorf("parameter %s: asked for shape %v, have %v", full, shape, n.Shape()))
			return nil
		}
		return n
	}
	v, err := s.b.params.Get(full, shape, init)
	if err != nil {
		s.Fail(err)
		return nil
	}
	opts := []G.NodeConsOpt{G.WithShape(shape...), G.WithName(full)}
	if v != nil {
		opts = append(opts, G.WithValue(v))
	}
	n := G.NewTensor(s.b.g, s.Dtype(), len(shape), opts...)
	s.b.nodes[full] = n
	return n
}

// Input adds a graph input (token ids, masks) of element type dt and the given
// shape; Program.Set fills it before each run. Inputs are named without prefix.
func (s *Scope) Input(name string, dt tensor.Dtype, shape ...int) *G.Node {
	if _, ok := s.b.inputs[name]; ok {
		s.Fail(errors.Errorf("input %s defined twice", name))
		return nil
	}
	v := tensor.New(tensor.Of(dt), tensor.WithShape(shape...))
	n := G.NewTensor(s.b.g, dt, len(shape), G.WithShape(shape...), G.WithName(name), G.WithValue(v))
	s.b.inputs[name] = n
	return n
}

// Constant adds a fixed tensor (sinusoidal encodings, a projection in a
// test). A float tensor is converted to the graph's element type, so a
// float64 constant serves a float32 graph.
func (s *Scope) Constant(name string, v *tensor.Dense) *G.Node {
	if dt := v.Dtype(); dt != s.Dtype() && (dt == tensor.Float32 || dt == tensor.Float64) {
		v = FromFloat64s(s.Dtype(), Float64s(v), v.Shape()...)
	}
	return G.NewTensor(s.b.g, v.Dtype(), v.Dims(), G.WithShape(v.Shape()...), G.WithName(s.Name(name)), G.WithValue(v))
}

// Scalar is the constant v in the graph's element type, a one-element
// tensor that broadcasts against any shape: s.Mul(x, s.Scalar(0.5)).
func (s *Scope) Scalar(v float64) *G.Node {
	return s.Constant(fmt.Sprintf("scalar(%v)", v), FromFloat64s(s.Dtype(), []float64{v}, 1))
}

// Record adds the node that f makes to s, the way the op methods do: it calls
// f unless building already failed or an input in is nil, records f's error
// in s, and returns nil after any error. An op defined in another package
// uses it to check its operands before it applies its Op (Scope.Apply
// applies an Op alone).
func (s *Scope) Record(f func() (*G.Node, error), in ...*G.Node) *G.Node { return s.do(f, in...) }

// do runs f unless building already failed or an input is missing.
func (s *Scope) do(f func() (*G.Node, error), in ...*G.Node) *G.Node {
	if s.b.err != nil {
		return nil
	}
	for _, n := range in {
		if n == nil {
			s.Fail(errors.New("an input node is nil"))
			return nil
		}
	}
	n, err := f()
	s.Fail(err)
	if err != nil {
		return nil
	}
	return n
}

// Keep records n under its full name in this scope so that it can be read after
// a run (attention weights, say): s.Keep("weights", w) in
// "decoder.layers.0.cross_attn" is kept as "decoder.layers.0.cross_attn.weights".
func (s *Scope) Keep(name string, n *G.Node) {
	if n != nil {
		s.b.kept[s.Name(name)] = n
	}
}

// Kept is every node recorded with Keep, by full name.
func (s *Scope) Kept() map[string]*G.Node { return s.b.kept }
