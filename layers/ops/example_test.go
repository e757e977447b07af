package ops_test

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/layers/ops"
)

// This example adds positions to a batch of one sequence of two positions
// and splits it into two heads, then takes the loss of uniform logits over
// four tokens, whose every target has log-probability −log 4.
func Example() {
	x := tensor.New(tensor.WithShape(1, 2, 4), tensor.WithBacking([]float64{1, 2, 3, 4, 5, 6, 7, 8}))
	pe := tensor.New(tensor.WithShape(3, 4), tensor.WithBacking([]float64{0, 0, 0, 0, 10, 10, 10, 10, 20, 20, 20, 20}))
	heads, err := graph.Eval(nil, func(s *graph.Scope) *G.Node {
		return ops.SplitHeads(s, ops.AddPositions(s, s.Constant("x", x), s.Constant("pe", pe)), 2)
	})
	fmt.Println(heads.Shape(), heads.Data(), err)

	loss, err := graph.Eval(nil, func(s *graph.Scope) *G.Node {
		logits := s.Constant("logits", tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(1, 3, 4)))
		targets := s.Constant("targets", tensor.New(tensor.WithShape(1, 3), tensor.WithBacking([]int{2, 0, 3})))
		return ops.SmoothedCrossEntropyLogits(s, logits, targets, 0.1, 0) // target 0 is padding
	})
	fmt.Printf("loss %.4f (log 4 = 1.3863), %v\n", loss.Data(), err)
	// Output:
	// (1, 2, 2, 2) [1 2 15 16 3 4 17 18] <nil>
	// loss 1.3863 (log 4 = 1.3863), <nil>
}
