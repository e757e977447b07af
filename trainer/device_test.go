package trainer

import (
	"math"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/internal/simtest"
	"github.com/transformer-go/transformer/model"
)

// TestDeviceTraining trains tiny (dropout on) for twenty steps on the
// simulated device, Adam there too, and on the CPU from the same weights and
// batch: every parameter ends within 1e-5 relative L2 of the CPU's.
func TestDeviceTraining(t *testing.T) {
	cfg, err := model.Preset("tiny", 40)
	if err != nil {
		t.Fatal(err)
	}
	compareTraining(t, simtest.Runtime(t), cfg, model.Shape{Batch: 1, SrcLen: 4, TgtLen: 3}, 1e-5)
}

// compareTraining trains cfg for twenty steps on the device runtime dev and
// on the CPU, from the same weights and batch of shape sh: the losses agree
// at every step and every parameter ends within tol relative L2 of the
// CPU's.
func compareTraining(t *testing.T, dev *graph.Runtime, cfg model.Config, sh model.Shape, tol float64) {
	t.Helper()
	cpu, err := NewRig(cfg, sh, graph.CPU())
	if err != nil {
		t.Fatal(err)
	}
	gpu, err := NewRig(cfg, sh, dev)
	if err != nil {
		t.Fatal(err)
	}
	for step := range 20 {
		for _, r := range []*Rig{cpu, gpu} {
			if err := r.TrainStep(); err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
		}
		if a, b := cpu.train.Loss(), gpu.train.Loss(); math.Abs(a-b) > tol*math.Abs(a) {
			t.Fatalf("step %d: loss %g on the device, %g on the CPU", step, b, a)
		}
	}
	if err := dev.Download(gpu.p); err != nil {
		t.Fatal(err)
	}
	for _, name := range cpu.p.Names() {
		if strings.HasSuffix(name, "attn.k_proj.bias") {
			// A key bias adds the same score to every key of a query, which
			// softmax ignores: its gradient is 0 but for rounding, which
			// Adam scales up to whole steps, different on each device.
			for _, r := range []*Rig{cpu, gpu} {
				if g, q := norm(r.train.Grad(name)), norm(r.train.Grad(strings.Replace(name, "k_proj", "q_proj", 1))); g > 10*tol*q {
					t.Errorf("%s: gradient of norm %g beside the query bias's %g: want rounding only", name, g, q)
				}
			}
			continue
		}
		want, got := graph.Float64s(cpu.p.Value(name)), graph.Float64s(gpu.p.Value(name))
		var d float64
		for i := range want {
			d += (got[i] - want[i]) * (got[i] - want[i])
		}
		if w := norm(cpu.p.Value(name)); math.Sqrt(d) > tol*w {
			t.Errorf("%s: relative L2 distance %.3g from the CPU's after 20 steps", name, math.Sqrt(d)/w)
		}
	}
}

// norm is the L2 norm of t.
func norm(t *tensor.Dense) float64 {
	var s float64
	for _, v := range graph.Float64s(t) {
		s += v * v
	}
	return math.Sqrt(s)
}
