package graph

import (
	"math"
	"slices"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestLogSoftmaxLargeNumbers is ONNX's test_logsoftmax_large_number in
// float32: rows near 1e4 must give the log-probabilities of the same row
// near 0, (x − max) − log Σ exp(x − max), to float32's precision at their
// own magnitude (they were off by up to 8e-4 when max + log Σ was formed
// first).
func TestLogSoftmaxLargeNumbers(t *testing.T) {
	xs := []float32{0, 1, 2, 3, 10000, 10001, 10002, 10003}
	out := run(t, tensor.Float32, func(s *Scope) map[string]*G.Node {
		return map[string]*G.Node{"y": s.LogSoftmax(s.Constant("x", tensor.New(tensor.WithShape(2, 4), tensor.WithBacking(xs))))}
	})
	lse := math.Log(math.Exp(-3) + math.Exp(-2) + math.Exp(-1) + 1)
	for i, got := range out["y"].Data().([]float32) {
		want := float64(i%4-3) - lse
		if math.Abs(float64(got)-want) > 5e-7 {
			t.Errorf("y[%d] = %v, want %v", i, got, want)
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
		s := NewScope(params)
		w := s.Param("w", tensor.Shape{2, 4}, Zeros)
		ids := s.Input("targets", tensor.Int, 2)
		p, err := Compile(nil, s, s.SmoothedCrossEntropyLogits(w, ids, 0.1, -1), nil)
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
		return result{p.Loss(), slices.Clone(p.Grad("w").Data().([]float32))}
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
