package graph

import (
	"math"
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
