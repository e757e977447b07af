package ops

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
)

func TestOpGradients(t *testing.T) {
	targets := []int{2, 0, 4, 1, 0, 3}
	setTargets := func(p *graph.Program) error { return p.Set("targets", targets) }
	x := func(s *graph.Scope, shape ...int) *G.Node { return s.Param("x", shape, graph.Normal(1)) }
	tests := []struct {
		name  string
		build func(s *graph.Scope) *G.Node
		set   func(p *graph.Program) error
	}{
		{"add positions", func(s *graph.Scope) *G.Node {
			return AddPositions(s, x(s, 2, 3, 4), s.Param("pe", tensor.Shape{5, 4}, graph.Normal(1)))
		}, nil},
		{"split heads", func(s *graph.Scope) *G.Node { return SplitHeads(s, x(s, 2, 3, 6), 3) }, nil},
		{"merge heads", func(s *graph.Scope) *G.Node { return MergeHeads(s, x(s, 2, 3, 4, 2)) }, nil},
		{"head scores", func(s *graph.Scope) *G.Node {
			return HeadScores(s, x(s, 2, 3, 6), s.Param("k", tensor.Shape{2, 4, 6}, graph.Normal(1)), 2)
		}, nil},
		{"head mix", func(s *graph.Scope) *G.Node {
			return HeadMix(s, x(s, 2, 3, 5, 4), s.Param("v", tensor.Shape{2, 4, 6}, graph.Normal(1)), 3)
		}, nil},
		{"smoothed cross-entropy", func(s *graph.Scope) *G.Node {
			return SmoothedCrossEntropy(s, s.LogSoftmax(x(s, 2, 3, 5)), s.Input("targets", tensor.Int, 2, 3), 0.1, 0)
		}, setTargets},
		{"smoothed cross-entropy from logits", func(s *graph.Scope) *G.Node {
			return SmoothedCrossEntropyLogits(s, x(s, 2, 3, 5), s.Input("targets", tensor.Int, 2, 3), 0.1, 0)
		}, setTargets},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := graph.GradCheck{Build: tc.build, Set: tc.set, Seed: 7, Float32: true}
			if err := c.Run(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestOpShapeErrors(t *testing.T) {
	tests := []struct {
		name  string
		build func(s *graph.Scope) *G.Node
	}{
		{"heads divide", func(s *graph.Scope) *G.Node { return SplitHeads(s, s.Param("h", tensor.Shape{1, 2, 6}, graph.Ones), 4) }},
		{"merged heads", func(s *graph.Scope) *G.Node { return MergeHeads(s, s.Param("h", tensor.Shape{2, 6}, graph.Ones)) }},
		{"positions too few", func(s *graph.Scope) *G.Node {
			return AddPositions(s, s.Param("x", tensor.Shape{1, 6, 4}, graph.Ones), s.Param("pe", tensor.Shape{5, 4}, graph.Ones))
		}},
		{"label smoothing", func(s *graph.Scope) *G.Node {
			return SmoothedCrossEntropy(s, s.Param("x", tensor.Shape{2, 3}, graph.Ones), s.Input("t", tensor.Int, 2), 1.5, 0)
		}},
		{"float targets", func(s *graph.Scope) *G.Node {
			return TargetScores(s, s.Param("x", tensor.Shape{2, 3}, graph.Ones), s.Param("t", tensor.Shape{2}, graph.Ones), 0)
		}},
		{"key heads divide", func(s *graph.Scope) *G.Node {
			return HeadScores(s, s.Param("q", tensor.Shape{2, 3, 8}, graph.Ones), s.Param("k", tensor.Shape{2, 3, 6}, graph.Ones), 4)
		}},
		{"value heads divide", func(s *graph.Scope) *G.Node {
			return HeadMix(s, s.Param("w", tensor.Shape{2, 4, 3, 3}, graph.Ones), s.Param("v", tensor.Shape{2, 3, 6}, graph.Ones), 3)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := graph.NewScope(newTestParams(t, tensor.Float32))
			if y := tc.build(s); y != nil || s.Err() == nil {
				t.Fatalf("node %v, error %v: want no node and an error", y, s.Err())
			}
		})
	}
}

// meanRows is the mean loss of smoothedRows over the rows that are not pad.
func meanRows(t *testing.T, x []float64, targets []int, eps float64, logits bool) float64 {
	t.Helper()
	stats := make([]float64, 2*len(targets))
	if err := smoothedRows(stats, x, targets, eps, 0, logits); err != nil {
		t.Fatal(err)
	}
	var sum float64
	for i := range targets {
		sum += stats[2*i+1]
	}
	return sum / float64(max(countTargets(targets, 0), 1))
}

func TestCrossEntropyValue(t *testing.T) {
	// Two rows over a vocabulary of 3; the second target is padding.
	logp := []float64{math.Log(0.5), math.Log(0.25), math.Log(0.25), 0, 0, 0}
	got := meanRows(t, logp, []int{1, 0}, 0.1, false)
	want := -(0.9*math.Log(0.25) + 0.1/3*(math.Log(0.5)+2*math.Log(0.25)))
	if math.Abs(got-want) > 1e-12 {
		t.Fatalf("loss %g, want %g", got, want)
	}
	if got := meanRows(t, logp, []int{0, 0}, 0.1, false); got != 0 {
		t.Fatalf("loss of an all-padding batch = %g, want 0", got)
	}
}

func TestCrossEntropyFromLogitsEqualsTheTwoOps(t *testing.T) {
	logits := []float64{0.3, -1.2, 2.5, 0.1, 7, -3, 0.5, 0.5, 0.5}
	targets := []int{2, 0, 1}
	logp, err := graph.Eval(nil, func(s *graph.Scope) *G.Node {
		return s.LogSoftmax(s.Constant("logits", tensor.New(tensor.WithShape(3, 3), tensor.WithBacking(logits))))
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, eps := range []float64{0, 0.1} {
		want := meanRows(t, logp.Data().([]float64), targets, eps, false)
		got := meanRows(t, logits, targets, eps, true)
		if math.Abs(got-want) > 1e-12 {
			t.Fatalf("ε=%g: fused loss %.15g, two ops %.15g", eps, got, want)
		}
	}
}

// TestFusedLossLargeLogits checks the fused loss and its gradient on
// logits near 1e4 against the same logits shifted to near 0, which
// log-softmax and its loss do not change.
func TestFusedLossLargeLogits(t *testing.T) {
	base := []float32{0.5, -1, 2, 3.25, 1, 0, -2.5, 0.75}
	type result struct {
		loss float64
		grad []float32
	}
	lossOf := func(shift float32) result {
		params := newTestParams(t, tensor.Float32)
		s := graph.NewScope(params)
		w := s.Param("w", tensor.Shape{2, 4}, graph.Zeros)
		ids := s.Input("targets", tensor.Int, 2)
		p, err := graph.Compile(nil, s, SmoothedCrossEntropyLogits(s, w, ids, 0.1, -1), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		for i, v := range base {
			params.Value("w").Data().([]float32)[i] = v + shift
		}
		if err := p.Set("targets", []int{3, 0}); err != nil {
			t.Fatal(err)
		}
		if err := p.Run(); err != nil {
			t.Fatal(err)
		}
		return result{lossOf(t, p), slices.Clone(p.Grad("w").Data().([]float32))}
	}
	near0, near1e4 := lossOf(0), lossOf(10000)
	// base's elements are multiples of 1/4, so 1e4 + base[i] is exact in
	// float32: the loss and gradient must agree to float32's precision.
	if math.Abs(near0.loss-near1e4.loss) > 1e-5 {
		t.Errorf("loss %v near 1e4, %v near 0", near1e4.loss, near0.loss)
	}
	for i := range near0.grad {
		if d := math.Abs(float64(near0.grad[i] - near1e4.grad[i])); d > 1e-5*math.Abs(float64(near0.grad[i]))+1e-7 {
			t.Errorf("gradient[%d] %v near 1e4, %v near 0", i, near1e4.grad[i], near0.grad[i])
		}
	}
}

func newTestParams(t *testing.T, dt tensor.Dtype) *graph.Params {
	t.Helper()
	p, err := graph.NewParams(dt, rand.New(rand.NewPCG(1, 0)))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// run builds an evaluation graph in element type dt with build, runs it on
// rt (nil: the CPU in float32 products), and returns the named outputs.
func run(t *testing.T, rt *graph.Runtime, dt tensor.Dtype, build func(s *graph.Scope) map[string]*G.Node) map[string]*tensor.Dense {
	t.Helper()
	s := graph.NewScope(newTestParams(t, dt))
	outs := build(s)
	p, err := graph.Compile(rt, s, nil, outs)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Run(); err != nil {
		t.Fatal(err)
	}
	res := map[string]*tensor.Dense{}
	for name := range outs {
		res[name] = p.Output(name)
	}
	return res
}

func assertClose[T graph.Float](t *testing.T, what string, got, want []T, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if d := math.Abs(float64(got[i] - want[i])); !(d <= tol) {
			t.Fatalf("%s[%d] = %v, want %v (all: %v)", what, i, got[i], want[i], got)
		}
	}
}

// lossOf is p's loss after its last run, failing t if it has none.
func lossOf(t testing.TB, p *graph.Program) float64 {
	t.Helper()
	l, err := p.Loss()
	if err != nil {
		t.Fatal(err)
	}
	return l
}
