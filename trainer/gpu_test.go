package trainer

import (
	"testing"

	"github.com/transformer-go/transformer/internal/simtest"
	"github.com/transformer-go/transformer/model"
)

// TestGPUTrainingBase trains base (dropout on) for twenty steps on the GPU,
// Adam there too, and on the CPU from the same weights and batch: every
// parameter ends within 1e-3 relative L2 of the CPU's. It skips without a
// GPU; scripts/gpu/run.sh runs it (TF32 off).
func TestGPUTrainingBase(t *testing.T) {
	dev := simtest.GPU(t)
	cfg, err := model.Preset("base", 1000)
	if err != nil {
		t.Fatal(err)
	}
	compareTraining(t, dev, cfg, model.Shape{Batch: 8, SrcLen: 16, TgtLen: 16}, 1e-3)
}
