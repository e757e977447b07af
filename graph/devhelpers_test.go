package graph_test

import (
	"os"
	"os/exec"
	"testing"

	. "github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/graph/cuda"
)

// simRuntime is a runtime on the simulated device (the kernels' CUDA source
// built with g++ and run on the CPU), with products in precision p.
// Without g++ it skips, unless CI=true, where it fails.
func simRuntime(t *testing.T, p Precision) *Runtime {
	t.Helper()
	if _, err := exec.LookPath("g++"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("g++ not found with CI=true: the simulated device needs it (apt-get install g++)")
		}
		t.Skip("g++ not found: the simulated device needs it (apt-get install g++)")
	}
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

// lossOf is p's loss after its last run, failing t if it has none.
func lossOf(t testing.TB, p *Program) float64 {
	t.Helper()
	l, err := p.Loss()
	if err != nil {
		t.Fatal(err)
	}
	return l
}
