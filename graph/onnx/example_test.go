package onnx_test

import (
	"fmt"
	"math"
	"math/rand/v2"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/graph/onnx"
)

// softsignForward is y = x / (1 + |x|).
func softsignForward(y graph.Operand[float32], x []graph.Operand[float32]) error {
	for i, v := range x[0].Data {
		y.Data[i] = v / (1 + float32(math.Abs(float64(v))))
	}
	return nil
}

// softsignONNX is softsign's ONNX form, Div(x, Add(Abs(x), 1)), declared
// beside its kernels as graph's own ops declare theirs.
func softsignONNX(b *graph.ONNXBuilder, _ graph.ONNXValue, x []graph.ONNXValue) (string, error) {
	abs := b.Op("Abs", []string{x[0].Name}, nil)
	return b.Op("Div", []string{x[0].Name, b.Op("Add", []string{abs, b.Scalar(1)}, nil)}, nil), nil
}

// An op of one's own declares its ONNX form beside its kernels; Export
// writes a graph that holds it, and refuses, naming the op, one whose op
// declares none.
func ExampleExport() {
	softsign := graph.Op{Name: "softsign", Arity: 1, Shape: graph.SameShape,
		F32: graph.Kernels[float32]{Forward: softsignForward}, ONNX: softsignONNX}
	params, _ := graph.NewParams(tensor.Float32, rand.New(rand.NewPCG(1, 2)))
	s := graph.NewScope(params)
	x := s.Input("x", tensor.Float32, 4, 3)
	w := s.Param("w", tensor.Shape{2, 3}, graph.XavierUniform)
	y := s.Apply(softsign, s.MatMul(x, w, true))
	model, err := onnx.Export(s, map[string]*G.Node{"y": y}, onnx.Options{Name: "softsign_layer"})
	fmt.Println(len(model) > 0, err)

	softsign.ONNX = nil
	s = graph.NewScope(params)
	y = s.Apply(softsign, s.Input("x", tensor.Float32, 4, 3))
	_, err = onnx.Export(s, map[string]*G.Node{"y": y}, onnx.Options{Name: "softsign"})
	fmt.Println(err)
	// Output:
	// true <nil>
	// exporting to ONNX: no ONNX form (graph.Op.ONNX) for op softsign
}
