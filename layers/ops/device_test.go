package ops

import (
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/internal/simtest"
)

// TestDeviceOps runs this package's ops through their device kernels
// (graph.Op.Device) on the simulated device and on the CPU: the outputs
// and, for the differentiable ones, the gradients agree to 1e-5 relative.
func TestDeviceOps(t *testing.T) {
	dev := simtest.Runtime(t)
	targets := []int{2, 0, 4, 1, 0, 3}
	setTargets := func(p *graph.Program) error { return p.Set("targets", targets) }
	setSlot := func(p *graph.Program) error { return p.Set("slot", []int{2}) }
	setIDs := func(p *graph.Program) error { return p.Set("ids", []int{3, 0, 5, 2, 2, 0}) }
	x := func(s *graph.Scope, shape ...int) *G.Node { return s.Param("x", shape, graph.Normal(1)) }
	tests := []struct {
		name  string
		build func(s *graph.Scope) *G.Node
		set   func(p *graph.Program) error
		loss  bool
	}{
		{"add positions", func(s *graph.Scope) *G.Node {
			return AddPositions(s, x(s, 2, 3, 4), s.Param("pe", tensor.Shape{5, 4}, graph.Normal(1)))
		}, nil, true},
		{"split heads", func(s *graph.Scope) *G.Node { return SplitHeads(s, x(s, 2, 3, 6), 3) }, nil, true},
		{"merge heads", func(s *graph.Scope) *G.Node { return MergeHeads(s, x(s, 2, 3, 4, 2)) }, nil, true},
		{"head scores", func(s *graph.Scope) *G.Node {
			return HeadScores(s, x(s, 2, 3, 6), s.Param("k", tensor.Shape{2, 4, 6}, graph.Normal(1)), 2)
		}, nil, true},
		{"head mix", func(s *graph.Scope) *G.Node {
			return HeadMix(s, x(s, 2, 3, 5, 4), s.Param("v", tensor.Shape{2, 4, 6}, graph.Normal(1)), 3)
		}, nil, true},
		{"head scores, grouped", func(s *graph.Scope) *G.Node {
			return HeadScores(s, x(s, 2, 3, 8), s.Param("k", tensor.Shape{2, 4, 4}, graph.Normal(1)), 4)
		}, nil, true},
		{"head mix, grouped", func(s *graph.Scope) *G.Node {
			return HeadMix(s, x(s, 2, 4, 3, 5), s.Param("v", tensor.Shape{2, 5, 4}, graph.Normal(1)), 2)
		}, nil, true},
		{"set slot", func(s *graph.Scope) *G.Node {
			return SetSlot(s, x(s, 2, 3, 5, 4), s.Param("new", tensor.Shape{2, 3, 1, 4}, graph.Normal(1)), s.Input("slot", tensor.Int, 1))
		}, setSlot, true},
		{"smoothed cross-entropy", func(s *graph.Scope) *G.Node {
			return SmoothedCrossEntropy(s, s.LogSoftmax(x(s, 2, 3, 5)), s.Input("targets", tensor.Int, 2, 3), 0.1, 0)
		}, setTargets, true},
		{"smoothed cross-entropy from logits", func(s *graph.Scope) *G.Node {
			return SmoothedCrossEntropyLogits(s, x(s, 2, 3, 5), s.Input("targets", tensor.Int, 2, 3), 0.1, 0)
		}, setTargets, true},
		{"padding mask under a softmax", func(s *graph.Scope) *G.Node {
			return s.Softmax(x(s, 2, 2, 3, 3), PaddingMask(s, s.Input("ids", tensor.Int, 2, 3), 0), 1)
		}, setIDs, true},
		{"causal mask under a softmax", func(s *graph.Scope) *G.Node {
			return s.Softmax(x(s, 2, 2, 3, 3), CausalMask(s, s.Input("ids", tensor.Int, 2, 3), 0), 1)
		}, setIDs, true},
		{"target scores", func(s *graph.Scope) *G.Node {
			return TargetScores(s, x(s, 2, 3, 5), s.Input("targets", tensor.Int, 2, 3), 0)
		}, setTargets, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := graph.DeviceCheck{Device: dev, Build: tc.build, Set: tc.set, Seed: 7, Loss: tc.loss}
			if err := c.Run(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestDeviceRefusesTargetsOutsideTheVocabulary: a target outside the
// vocabulary stops the loss and the target scores on a device with the
// CPU's error, checked on the host before the kernel launches.
func TestDeviceRefusesTargetsOutsideTheVocabulary(t *testing.T) {
	dev := simtest.Runtime(t)
	for name, op := range map[string]func(s *graph.Scope, logits, targets *G.Node) *G.Node{
		"loss":   func(s *graph.Scope, l, t *G.Node) *G.Node { return SmoothedCrossEntropyLogits(s, l, t, 0.1, 0) },
		"scores": func(s *graph.Scope, l, t *G.Node) *G.Node { return TargetScores(s, l, t, 0) },
	} {
		s := graph.NewScope(newTestParams(t, tensor.Float32))
		y := op(s, s.Param("x", tensor.Shape{2, 3, 5}, graph.Normal(1)), s.Input("targets", tensor.Int, 2, 3))
		p, err := graph.Compile(dev, s, nil, map[string]*G.Node{"y": y})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Set("targets", []int{2, 0, 4, 1, 5, 3}); err != nil {
			t.Fatal(err)
		}
		if err := p.Run(); err == nil || !strings.Contains(err.Error(), "target 5 at row 4 outside the vocabulary [0, 5)") {
			t.Errorf("%s: target 5 of a vocabulary of 5 on the device: error %v", name, err)
		}
		if err := p.Close(); err != nil {
			t.Error(err)
		}
	}
}
