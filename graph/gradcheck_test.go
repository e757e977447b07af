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
	return Op{
		Name:  "double_with_wrong_gradient",
		Arity: 1,
		Shape: SameShape,
		F64: Kernels[float64]{Forward: func(y Operand[float64], in []Operand[float64]) error {
			for i, v := range in[0].Data {
				y.Data[i] = 2 * v
			}
			return nil
		}},
		Diff: []bool{true},
		Grad: func(_ G.Nodes, _, dy *G.Node) (G.Nodes, error) { return G.Nodes{dy}, nil },
	}.Apply(x)
}

func TestGradCheckCatchesWrongGradient(t *testing.T) {
	c := GradCheck{Seed: 1, Build: func(s *Scope) *G.Node {
		x := s.Param("x", tensor.Shape{3, 2}, Normal(1))
		return s.do(func() (*G.Node, error) { return double(x) }, x)
	}}
	err := c.Run()
	if err == nil || !strings.Contains(err.Error(), "6 elements differ") {
		t.Fatalf("wrong gradient not caught: %v", err)
	}
}
