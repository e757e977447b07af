package ops_test

import (
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/internal/onnxtest"
	"github.com/transformer-go/transformer/layers/ops"
)

// ints is an int input of the given shape.
func ints(v []int, shape ...int) *tensor.Dense {
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(v))
}

// TestOpsAgreeWithONNX checks the ONNX form of every op of this package
// that evaluation and decoding graphs hold against its kernels, in ONNX
// Runtime, in float32 and float64, through ONNX's checker: the heads'
// split and merge, the head products (grouped-query too), positions, the
// cache's slot, the masks and the target scores.
func TestOpsAgreeWithONNX(t *testing.T) {
	x := func(s *graph.Scope, shape ...int) *G.Node { return s.Input("x", s.Dtype(), shape...) }
	p := func(s *graph.Scope, name string, shape ...int) *G.Node { return s.Param(name, shape, graph.Normal(1)) }
	ids := ints([]int{5, 3, 0, 0, 4, 1, 2, 0}, 2, 4)
	cases := []onnxtest.Case{
		{Name: "split heads", Inputs: map[string]*tensor.Dense{"x": onnxtest.Normal(1, 2, 3, 6)}, Build: func(s *graph.Scope) *G.Node {
			return ops.SplitHeads(s, x(s, 2, 3, 6), 3)
		}},
		{Name: "merge heads", Inputs: map[string]*tensor.Dense{"x": onnxtest.Normal(2, 2, 3, 4, 2)}, Build: func(s *graph.Scope) *G.Node {
			return ops.MergeHeads(s, x(s, 2, 3, 4, 2))
		}},
		{Name: "head scores", Inputs: map[string]*tensor.Dense{"x": onnxtest.Normal(3, 2, 3, 8)}, Build: func(s *graph.Scope) *G.Node {
			return ops.HeadScores(s, x(s, 2, 3, 8), p(s, "k", 2, 5, 8), 4)
		}},
		{Name: "grouped head scores", Inputs: map[string]*tensor.Dense{"x": onnxtest.Normal(4, 2, 3, 8)}, Build: func(s *graph.Scope) *G.Node {
			return ops.HeadScores(s, x(s, 2, 3, 8), p(s, "k", 2, 5, 4), 4) // 2 key heads
		}},
		{Name: "head mix", Inputs: map[string]*tensor.Dense{"x": onnxtest.Normal(5, 2, 4, 3, 5)}, Build: func(s *graph.Scope) *G.Node {
			return ops.HeadMix(s, x(s, 2, 4, 3, 5), p(s, "v", 2, 5, 8), 4)
		}},
		{Name: "multi-query head mix", Inputs: map[string]*tensor.Dense{"x": onnxtest.Normal(6, 2, 4, 3, 5)}, Build: func(s *graph.Scope) *G.Node {
			return ops.HeadMix(s, x(s, 2, 4, 3, 5), p(s, "v", 2, 5, 2), 1)
		}},
		{Name: "add positions", Inputs: map[string]*tensor.Dense{"x": onnxtest.Normal(7, 2, 3, 4)}, Build: func(s *graph.Scope) *G.Node {
			return ops.AddPositions(s, x(s, 2, 3, 4), p(s, "pe", 6, 4))
		}},
		{Name: "set slot", Inputs: map[string]*tensor.Dense{"x": onnxtest.Normal(8, 2, 1, 4), "slot": ints([]int{3}, 1)}, Build: func(s *graph.Scope) *G.Node {
			return ops.SetSlot(s, p(s, "cache", 2, 5, 4), x(s, 2, 1, 4), s.Input("slot", tensor.Int, 1))
		}},
		{Name: "padding mask", Inputs: map[string]*tensor.Dense{"ids": ids}, Build: func(s *graph.Scope) *G.Node {
			return ops.PaddingMask(s, s.Input("ids", tensor.Int, 2, 4), 0)
		}},
		{Name: "causal mask", Inputs: map[string]*tensor.Dense{"ids": ids}, Build: func(s *graph.Scope) *G.Node {
			return ops.CausalMask(s, s.Input("ids", tensor.Int, 2, 4), 0)
		}},
		{Name: "target scores", Inputs: map[string]*tensor.Dense{"x": scoreLogits(), "ids": ids}, Build: func(s *graph.Scope) *G.Node {
			return ops.TargetScores(s, x(s, 2, 4, 6), s.Input("ids", tensor.Int, 2, 4), 0)
		}},
	}
	onnxtest.Agree(t, 1e-5, cases...)
}

// scoreLogits are logits [2, 4, 6] for the targets 5 3 0 0 / 4 1 2 0: the
// first and fifth rows' targets are their largest logits, the second's
// ties with an earlier one (so it is not the first largest).
func scoreLogits() *tensor.Dense {
	x := onnxtest.Normal(9, 2, 4, 6)
	v := x.Float64s()
	v[0*6+5], v[1*6+3], v[1*6+1], v[4*6+4] = 4, 3.5, 3.5, 5
	return x
}
