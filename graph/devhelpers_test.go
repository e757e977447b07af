package graph_test

import (
	"testing"

	. "github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/internal/simtest"
)

// simRuntime is a runtime on the simulated device with products in
// precision p (simtest.RuntimeOf).
func simRuntime(t *testing.T, p Precision) *Runtime { return simtest.RuntimeOf(t, p) }

// lossOf is LossOf, the graph package's test helper.
func lossOf(t testing.TB, p *Program) float64 { return LossOf(t, p) }
