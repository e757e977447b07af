// Package simtest gives tests a runtime on the simulated CUDA device
// (cuda.NewSimulatedRuntime): the kernels' CUDA source built with g++ and
// run on the CPU.
package simtest

import (
	"os"
	"os/exec"
	"testing"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/graph/cuda"
)

// Runtime is a float32 runtime on the simulated device, closed when t ends.
// Without g++ it skips t, or fails it under CI=true.
func Runtime(t testing.TB) *graph.Runtime { return RuntimeOf(t, graph.Float32) }

// RuntimeOf is Runtime with products in precision p.
func RuntimeOf(t testing.TB, p graph.Precision) *graph.Runtime {
	t.Helper()
	needGXX(t)
	rt, err := cuda.NewSimulatedRuntime(t.TempDir(), p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := rt.Close(); err != nil {
			t.Error(err)
		}
	})
	return rt
}

// needGXX skips t without g++, or fails it under CI=true.
func needGXX(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("g++"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("g++ not found with CI=true: the simulated device needs it (apt-get install g++)")
		}
		t.Skip("g++ not found: the simulated device needs it (apt-get install g++)")
	}
}
