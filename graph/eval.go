package graph

import (
	"math/rand/v2"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Eval builds a small graph, runs it once and returns the value of the node
// build returns, in one call: for notebooks and tests, where compiling a
// Program, running it and reading its output by name is ceremony. The
// graph is built for evaluation (no dropout) over params; nil params is a
// new float64 store whose parameters are drawn from a generator seeded
// with 1. The value is a copy, with the node's shape (a scalar has shape
// () and its Data is the number), and stays valid after other programs
// run.
//
//	v, err := graph.Eval(nil, func(s *graph.Scope) *G.Node {
//		x := s.Constant("x", tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float64{1, 2, 3, 4})))
//		return s.Sum(s.Mul(x, x), 1, false)
//	}) // v = [5 25]
func Eval(params *Params, build func(s *Scope) *G.Node) (*tensor.Dense, error) {
	if params == nil {
		var err error
		if params, err = NewParams(tensor.Float64, rand.New(rand.NewPCG(1, 1))); err != nil {
			return nil, err
		}
	}
	s := NewScope(params)
	out := build(s)
	if out == nil && s.Err() == nil {
		return nil, errors.New("eval: the graph's builder returned no node")
	}
	p, err := Compile(nil, s, nil, map[string]*G.Node{evalKey: out})
	if err != nil {
		return nil, errors.Wrap(err, "eval")
	}
	defer p.Close()
	if err := p.Run(); err != nil {
		return nil, errors.Wrap(err, "eval")
	}
	switch v := p.value(evalKey).(type) {
	case *tensor.Dense:
		return v.Clone().(*tensor.Dense), nil
	case *G.F64:
		return tensor.New(tensor.FromScalar(float64(*v))), nil
	case *G.F32:
		return tensor.New(tensor.FromScalar(float32(*v))), nil
	default:
		return nil, errors.Errorf("eval: the node holds a %T", v)
	}
}

// evalKey names Eval's output.
const evalKey = "eval"
