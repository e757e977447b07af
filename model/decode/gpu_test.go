package decode

import (
	"testing"

	"github.com/transformer-go/transformer/internal/simtest"
)

// TestGPUDecoding decodes with tiny's random weights on the GPU and on the
// CPU: greedy search and beam search give the CPU's tokens. It skips
// without a GPU; scripts/gpu/run.sh runs it.
func TestGPUDecoding(t *testing.T) { checkDecoding(t, simtest.GPU(t)) }
