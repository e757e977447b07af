package onnx_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/graph/onnx"
	"github.com/transformer-go/transformer/internal/onnxtest"
)

// unary is a case of an op of one input x [2, 3, 4].
func unary(name string, f func(s *graph.Scope, x *G.Node) *G.Node) onnxtest.Case {
	return onnxtest.Case{Name: name, Inputs: map[string]*tensor.Dense{"x": onnxtest.Normal(1, 2, 3, 4)}, Build: func(s *graph.Scope) *G.Node {
		return f(s, s.Input("x", s.Dtype(), 2, 3, 4))
	}}
}

// param is a parameter of s of normal values.
func param(s *graph.Scope, name string, shape ...int) *G.Node {
	return s.Param(name, shape, graph.Normal(1))
}

// TestOpsAgree checks the ONNX form of every op of package graph that an
// evaluation graph holds against its kernels, in ONNX Runtime, in float32
// and float64, through ONNX's checker.
func TestOpsAgree(t *testing.T) {
	mask := make([]float64, 2*1*3*4) // [2, 1, 3, 4]: row 1 of batch 0 all masked, the others partly
	for i := range mask {
		if i/4 == 1 || i%4 == 3 {
			mask[i] = math.Inf(-1)
		}
	}
	ids := tensor.New(tensor.WithShape(2, 3), tensor.WithBacking([]int{4, 0, 2, 2, 5, 1}))
	cases := []onnxtest.Case{
		unary("relu", (*graph.Scope).ReLU),
		unary("exp", (*graph.Scope).Exp),
		unary("log", func(s *graph.Scope, x *G.Node) *G.Node { return s.Log(s.Exp(x)) }),
		unary("sqrt", func(s *graph.Scope, x *G.Node) *G.Node { return s.Sqrt(s.Exp(x)) }),
		unary("tanh", (*graph.Scope).Tanh),
		unary("sigmoid", (*graph.Scope).Sigmoid),
		unary("silu", (*graph.Scope).SiLU),
		{Name: "gelu", Inputs: map[string]*tensor.Dense{"x": onnxtest.Normal(1, 2, 3, 4)}, Float32Only: true, Build: func(s *graph.Scope) *G.Node {
			return s.GELU(s.Input("x", s.Dtype(), 2, 3, 4))
		}},
		unary("log softmax", (*graph.Scope).LogSoftmax),
		unary("softmax", func(s *graph.Scope, x *G.Node) *G.Node { return s.Softmax(x, nil, 0.5) }),
		{Name: "masked softmax", Inputs: map[string]*tensor.Dense{"x": onnxtest.Normal(2, 2, 2, 3, 4), "mask": graph.FromFloat64s(tensor.Float64, mask, 2, 1, 3, 4)},
			Build: func(s *graph.Scope) *G.Node {
				return s.Softmax(s.Input("x", s.Dtype(), 2, 2, 3, 4), s.Input("mask", s.Dtype(), 2, 1, 3, 4), 0.25)
			}},
		unary("add sub mul div", func(s *graph.Scope, x *G.Node) *G.Node {
			y := s.Add(x, param(s, "row", 4))
			y = s.Sub(param(s, "col", 3, 1), y)
			y = s.Mul(y, param(s, "m", 2, 1, 4))
			return s.Div(y, s.Add(s.Exp(param(s, "d", 1, 3, 4)), s.Scalar(1)))
		}),
		unary("layer norm", func(s *graph.Scope, x *G.Node) *G.Node {
			return s.LayerNorm(x, param(s, "g", 4), param(s, "b", 4), 1e-5)
		}),
		unary("add layer norm", func(s *graph.Scope, x *G.Node) *G.Node {
			return s.AddLayerNorm(x, param(s, "r", 2, 3, 4), param(s, "g", 4), param(s, "b", 4), 1e-5)
		}),
		unary("normalize centered", func(s *graph.Scope, x *G.Node) *G.Node { return s.Normalize(x, param(s, "g", 4), 1e-3, true) }),
		unary("rms norm", func(s *graph.Scope, x *G.Node) *G.Node { return s.Normalize(x, param(s, "g", 4), 1e-5, false) }),
		unary("add rms norm", func(s *graph.Scope, x *G.Node) *G.Node {
			return s.AddNormalize(x, param(s, "r", 2, 3, 4), param(s, "g", 4), 1e-5, false)
		}),
		unary("matmul", func(s *graph.Scope, x *G.Node) *G.Node { return s.MatMul(x, param(s, "w", 4, 5), false) }),
		unary("matmul transposed", func(s *graph.Scope, x *G.Node) *G.Node { return s.MatMul(x, param(s, "w", 5, 4), true) }),
		unary("affine", func(s *graph.Scope, x *G.Node) *G.Node {
			return s.Affine(x, param(s, "w", 5, 4), param(s, "b", 5), true)
		}),
		unary("affine relu", func(s *graph.Scope, x *G.Node) *G.Node {
			return s.AffineReLU(x, param(s, "w", 4, 6), param(s, "b", 6), false)
		}),
		unary("batched matmul", func(s *graph.Scope, x *G.Node) *G.Node {
			y := s.BatchedMatMul(x, param(s, "b", 1, 5, 4), false, true) // [2, 3, 5]
			return s.BatchedMatMul(param(s, "a", 3, 2), y, true, false)  // [2, 2, 5]
		}),
		unary("reshape transpose", func(s *graph.Scope, x *G.Node) *G.Node {
			return s.Transpose(s.Reshape(x, 2, -1, 2, 2), 3, 0, 2, 1)
		}),
		unary("slice concat", func(s *graph.Scope, x *G.Node) *G.Node {
			return s.Concat(-1, s.Slice(x, -1, 2, 4), s.Slice(x, 2, 0, 1), param(s, "p", 2, 3, 2))
		}),
		unary("sum mean max", func(s *graph.Scope, x *G.Node) *G.Node {
			a := s.Sum(x, 1, true)                           // [2, 1, 4]
			b := s.Mean(x, -1, false)                        // [2, 3]
			c := s.Max(x, 0, false)                          // [3, 4]
			return s.Add(s.Add(a, s.Reshape(b, 2, 3, 1)), c) // [2, 3, 4]
		}),
		{Name: "embed", Inputs: map[string]*tensor.Dense{"ids": ids}, Build: func(s *graph.Scope) *G.Node {
			return s.Embed(param(s, "table", 6, 4), s.Input("ids", tensor.Int, 2, 3), 2)
		}},
	}
	onnxtest.Agree(t, 1e-5, cases...)
}

// recorder is a graph.ONNXWriter that counts what it is given.
type recorder struct{ calls int }

func (r *recorder) Input(graph.ONNXValue) error                           { r.calls++; return nil }
func (r *recorder) Initializer(string, *tensor.Dense) error               { r.calls++; return nil }
func (r *recorder) Node(string, []string, []string, map[string]any) error { r.calls++; return nil }
func (r *recorder) Output(graph.ONNXValue) error                          { r.calls++; return nil }

// double is an op of one's own without an ONNX form: y = 2x.
func double(x *G.Node) (*G.Node, error) {
	twice := func(y graph.Operand[float32], in []graph.Operand[float32]) error {
		for i, v := range in[0].Data {
			y.Data[i] = 2 * v
		}
		return nil
	}
	return graph.Op{Name: "my_double", Arity: 1, Shape: graph.SameShape, F32: graph.Kernels[float32]{Forward: twice}}.Apply(x)
}

// TestRefusesOpWithoutForm checks that a graph holding a user's op
// without an ONNX form is refused, the op named, before anything is
// written; and so is dropout's.
func TestRefusesOpWithoutForm(t *testing.T) {
	params, _ := graph.NewParams(tensor.Float32, rand.New(rand.NewPCG(1, 2)))
	s := graph.NewScope(params)
	x := s.Input("x", tensor.Float32, 2, 3)
	y := s.Record(func() (*G.Node, error) { return double(s.Tanh(x)) }, x)
	var r recorder
	err := graph.ExportONNX(s, map[string]*G.Node{"y": s.ReLU(y)}, &r)
	if err == nil || !strings.Contains(err.Error(), "my_double") {
		t.Fatalf("exporting a graph with my_double: %v, want an error naming it", err)
	}
	if r.calls != 0 {
		t.Errorf("%d calls to the writer before the error, want none", r.calls)
	}
	if _, err := onnx.Export(s, map[string]*G.Node{"y": y}, onnx.Options{}); err == nil || !strings.Contains(err.Error(), "my_double") {
		t.Errorf("onnx.Export: %v, want an error naming my_double", err)
	}
	// A training graph's dropout has no form either.
	s = graph.NewScope(params, graph.Training(rand.New(rand.NewPCG(3, 4))))
	y = s.Dropout(s.Input("x", tensor.Float32, 2, 3), 0.5)
	err = graph.ExportONNX(s, map[string]*G.Node{"y": y}, &r)
	if err == nil || !strings.Contains(err.Error(), "dropout(p=0.5)") || r.calls != 0 {
		t.Errorf("exporting dropout: %v after %d calls, want an error naming dropout(p=0.5) and none", err, r.calls)
	}
}

// TestRefusesOutputNamedAsInput checks that an output may not take the
// name of an input or a parameter, which ONNX's values share.
func TestRefusesOutputNamedAsInput(t *testing.T) {
	params, _ := graph.NewParams(tensor.Float32, rand.New(rand.NewPCG(1, 2)))
	s := graph.NewScope(params)
	x := s.Input("x", tensor.Float32, 2, 3)
	for _, name := range []string{"x", "w"} {
		var r recorder
		err := graph.ExportONNX(s, map[string]*G.Node{name: s.Add(x, s.Param("w", tensor.Shape{3}, graph.Zeros))}, &r)
		if err == nil || !strings.Contains(err.Error(), "output "+name) || r.calls != 0 {
			t.Errorf("an output named %s: %v after %d calls, want an error naming it and none", name, err, r.calls)
		}
	}
}
