package graph

import (
	"math/rand/v2"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// panicky is a user's op whose forward kernel indexes past its input, and
// whose backward kernel reads an input it did not save.
var panicky = Op{
	Name:  "panicky",
	Arity: 1,
	Shape: SameShape,
	F64: Kernels[float64]{
		Forward: func(y Operand[float64], x []Operand[float64]) error {
			y.Data[0] = x[0].Data[len(x[0].Data)]
			return nil
		},
	},
}

// unsaved is cube without Save: its backward kernel reads x, which the
// backward pass was not given.
var unsaved = Op{
	Name:  "cube_without_save",
	Arity: 1,
	Shape: SameShape,
	F64: Kernels[float64]{Forward: cubeForward[float64],
		Backward: func(_ int, dx Operand[float64], x []Operand[float64], _, dy Operand[float64]) error {
			for i, g := range dy.Data {
				dx.Data[i] = 3 * x[0].Data[i] * x[0].Data[i] * g
			}
			return nil
		}},
	Diff: []bool{true},
}

func TestKernelPanicIsAnError(t *testing.T) {
	params, err := NewParams(tensor.Float64, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	s := NewScope(params)
	x := s.Input("x", tensor.Float64, 2, 3)
	y := s.Apply(panicky, x)
	if s.Err() != nil {
		t.Fatal(s.Err())
	}
	p, err := Compile(nil, s, nil, map[string]*G.Node{"y": y})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Set("x", make([]float64, 6)); err != nil {
		t.Fatal(err)
	}
	err = p.Run()
	if err == nil || !strings.Contains(err.Error(), "panicky") || !strings.Contains(err.Error(), "(2, 3)") ||
		!strings.Contains(err.Error(), "index out of range") {
		t.Fatalf("a panicking kernel: %v, want an error naming the op, its input's shape and the panic", err)
	}
}

func TestGradCheckOfAnOpWithoutSaveIsAnError(t *testing.T) {
	c := GradCheck{Seed: 1, Build: func(s *Scope) *G.Node {
		return s.Apply(unsaved, s.Param("x", tensor.Shape{2, 3}, Normal(1)))
	}}
	err := c.Run()
	if err == nil || !strings.Contains(err.Error(), "cube_without_save/grad0") || !strings.Contains(err.Error(), "Save") {
		t.Fatalf("a backward kernel reading an unsaved input: %v, want an error naming the op and Save", err)
	}
}

func TestSameShapeChecksEveryInput(t *testing.T) {
	if _, err := SameShape([]tensor.Shape{{2, 3}, {6}}); err == nil || !strings.Contains(err.Error(), "input 1") {
		t.Errorf("[2,3] and [6]: %v, want an error naming input 1", err)
	}
	if _, err := SameShape(nil); err == nil {
		t.Error("no inputs: want an error")
	}
	if s, err := SameShape([]tensor.Shape{{2, 3}, {2, 3}}); err != nil || !s.Eq(tensor.Shape{2, 3}) {
		t.Errorf("[2,3] twice: %v, %v", s, err)
	}
}
