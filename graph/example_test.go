package graph_test

import (
	"fmt"
	"math"
	"math/rand/v2"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
)

// softsign is y = x / (1 + |x|), with dx = dy / (1 + |x|)²: an op defined
// outside package graph, as a user's package would.
var softsign = graph.Op{
	Name:  "softsign",
	Arity: 1,
	Shape: graph.SameShape,
	F32:   graph.Kernels[float32]{Forward: softsignForward[float32], Backward: softsignBackward[float32]},
	F64:   graph.Kernels[float64]{Forward: softsignForward[float64], Backward: softsignBackward[float64]},
	Diff:  []bool{true},
	Save:  []int{0}, // the backward pass reads x
}

func softsignForward[T graph.Float](y graph.Operand[T], x []graph.Operand[T]) error {
	for i, v := range x[0].Data {
		y.Data[i] = v / (1 + T(math.Abs(float64(v))))
	}
	return nil
}

func softsignBackward[T graph.Float](_ int, dx graph.Operand[T], x []graph.Operand[T], _, dy graph.Operand[T]) error {
	for i, v := range x[0].Data {
		d := 1 + T(math.Abs(float64(v)))
		dx.Data[i] = dy.Data[i] / (d * d)
	}
	return nil
}

// layer is softsign(x·Wᵀ) for x [batch, in] and W [out, in].
func layer(s *graph.Scope, x *G.Node, in, out int) *G.Node {
	w := s.Param("weight", tensor.Shape{out, in}, graph.XavierUniform)
	return s.Apply(softsign, s.MatMul(x, w, true))
}

// This example defines an op, checks its gradients, and trains a layer that
// uses it by gradient descent to reproduce the outputs of a teacher layer.
func ExampleOp() {
	check := graph.GradCheck{Seed: 1, Float32: true, Build: func(s *graph.Scope) *G.Node {
		return layer(s.In("layer"), s.Param("x", tensor.Shape{4, 3}, graph.Normal(1)), 3, 2)
	}}
	fmt.Println("gradient check:", check.Run())

	params, _ := graph.NewParams(tensor.Float32, rand.New(rand.NewPCG(1, 2)))
	s := graph.NewScope(params)
	x := s.Input("x", tensor.Float32, 16, 3)
	target := s.Input("target", tensor.Float32, 16, 2)
	diff := s.Sub(layer(s.In("layer"), x, 3, 2), target)
	// loss = mean over the batch of Σ (y - target)²
	loss := s.Mean(s.Sum(s.Mul(diff, diff), 1, false), 0, false)
	prog, err := graph.Compile(nil, s, loss, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer prog.Close()

	rng := rand.New(rand.NewPCG(3, 4))
	teacher := []float64{0.5, -1, 2, 1.5, 0.3, -0.7} // [2, 3]
	xs, ys := make([]float32, 16*3), make([]float32, 16*2)
	for i := range xs {
		xs[i] = float32(rng.NormFloat64())
	}
	for b := range 16 {
		for o := range 2 {
			var z float64
			for i := range 3 {
				z += float64(xs[b*3+i]) * teacher[o*3+i]
			}
			ys[b*2+o] = float32(z / (1 + math.Abs(z)))
		}
	}
	_ = prog.Set("x", xs)
	_ = prog.Set("target", ys)
	for step := range 300 {
		if err := prog.Run(); err != nil {
			fmt.Println(err)
			return
		}
		if first, err := prog.Loss(); step == 0 {
			fmt.Printf("first loss above 0.1: %t (%v)\n", first > 0.1, err)
		}
		// w ← w - 0.5·∂loss/∂w
		w := params.Value("layer.weight").Data().([]float32)
		for i, g := range prog.Grad("layer.weight").Data().([]float32) {
			w[i] -= 0.5 * g
		}
		params.Updated("layer.weight") // a change in place is announced
	}
	last, err := prog.Loss()
	fmt.Printf("last loss below 0.001: %t (%v)\n", last < 0.001, err)
	// Output:
	// gradient check: <nil>
	// first loss above 0.1: true (<nil>)
	// last loss below 0.001: true (<nil>)
}

// Evaluate a small graph in one call: the sum of squares of each row.
func ExampleEval() {
	v, err := graph.Eval(nil, func(s *graph.Scope) *G.Node {
		x := s.Constant("x", tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float64{1, 2, 3, 4})))
		return s.Sum(s.Mul(x, x), 1, false)
	})
	fmt.Println(v.Shape(), v.Data(), err)
	// Output: (2) [5 25] <nil>
}
