package graph

import (
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// double is y = 2x with a deliberately wrong gradient dx = dy, to show that the
// checker fails where it should.
func double(x *G.Node) (*G.Node, error) {
	op := &kernelOp{
		name:    "double_with_wrong_gradient",
		arity:   1,
		sig:     signature(tensorType(x.Dims()), tensorType(x.Dims())),
		shape:   sameShape,
		diffWRT: []bool{true},
		forward: func(y *tensor.Dense, in []*tensor.Dense) error {
			for i, v := range in[0].Data().([]float64) {
				y.Data().([]float64)[i] = 2 * v
			}
			return nil
		},
		diff: func(_ G.Nodes, _, dy *G.Node) (G.Nodes, error) { return G.Nodes{dy}, nil },
	}
	return apply(op, x)
}

func TestGradCheckCatchesWrongGradient(t *testing.T) {
	c := GradCheck{Seed: 1, Build: func(s *Scope) *G.Node {
		x := s.Param("x", tensor.Shape{3, 2}, Normal(1))
		return s.do(func() (*G.Node, error) { return double(x) }, x)
	}}
	err := c.Run()
	if err == nil || !strings.Contains(err.Error(), "6 gradient elements differ") {
		t.Fatalf("wrong gradient not caught: %v", err)
	}
}
