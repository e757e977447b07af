package simtest

import (
	"testing"

	"github.com/transformer-go/transformer/graph"
)

// GPU is a float32 runtime on the CUDA device, closed when t ends. Where no
// GPU is usable it skips t, saying why, even under CI=true: tests never
// fail for the lack of a GPU. scripts/gpu/run.sh runs these tests on a GPU
// machine.
func GPU(t testing.TB) *graph.Runtime {
	t.Helper()
	rt, err := graph.NewRuntime(graph.DeviceCUDA, graph.Float32)
	if err != nil {
		t.Skipf("no usable GPU (scripts/gpu/run.sh runs this test on a GPU machine): %v", err)
	}
	t.Cleanup(func() {
		if err := rt.Close(); err != nil {
			t.Error(err)
		}
	})
	return rt
}
