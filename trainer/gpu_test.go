package trainer

import (
	"testing"

	"github.com/transformer-go/transformer/internal/simtest"
	"github.com/transformer-go/transformer/model"
)

// TestGPUTrainingBase trains base (dropout on) for twenty steps on the GPU,
// Adam there too, and on the CPU from the same weights and batch. The first
// step's loss agrees within 1e-4 relative and its gradients within 1e-4
// relative L2 (cuBLAS sums in another order: the median was 8e-7 on an
// H200), the later losses within 1e-2, and both fall by more than a quarter. The weights are not compared:
// Adam makes whole steps of the key biases' rounding-only gradients,
// different on each device, and twenty steps on one batch separate the two
// runs (losses 1e-6 apart at step 2, 1e-3 at step 19 on the H200). It
// skips without a GPU; scripts/gpu/run.sh runs it (TF32 off).
func TestGPUTrainingBase(t *testing.T) {
	dev := simtest.GPU(t)
	cfg, err := model.Preset("base", 1000)
	if err != nil {
		t.Fatal(err)
	}
	cpu, gpu := newRigs(t, cfg, model.Shape{Batch: 8, SrcLen: 16, TgtLen: 16}, dev)
	first := stepBoth(t, 0, cpu, gpu, 1e-4)
	for _, name := range cpu.p.Names() {
		if isKeyBias(name) {
			roundingOnly(t, gpu, name, 1e-3)
			continue
		}
		nearCPU(t, "the gradient of "+name, cpu.train.Grad(name), gpu.train.Grad(name), 1e-4)
	}
	last := first
	for step := 1; step < 20; step++ {
		last = stepBoth(t, step, cpu, gpu, 1e-2)
	}
	if dev := lossOf(t, gpu.train); last > 0.75*first || dev > 0.75*first {
		t.Errorf("twenty steps on one batch: loss %g → %g on the CPU, %g on the device; want a fall of more than a quarter", first, last, dev)
	}
}

// TestGPUReplayIsOpByOp is TestDeviceReplayIsOpByOp on the GPU: the
// replays are CUDA graphs, and give the weights of the steps run op by op
// bit for bit. It skips without a GPU; scripts/gpu/run.sh runs it.
func TestGPUReplayIsOpByOp(t *testing.T) { checkReplay(t, simtest.CountedGPU) }
