package trainer

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/data"
	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/internal/simtest"
	"github.com/transformer-go/transformer/model"
)

// TestDeviceTraining trains tiny (dropout on) for twenty steps on the
// simulated device, Adam there too, and on the CPU from the same weights and batch:
// every parameter ends within 1e-5 relative L2 of the CPU's.
func TestDeviceTraining(t *testing.T) {
	cfg, err := model.Preset("tiny", 40)
	if err != nil {
		t.Fatal(err)
	}
	compareTraining(t, simtest.Runtime(t), cfg, model.Shape{Batch: 1, SrcLen: 4, TgtLen: 3}, 1e-5)
}

// compareTraining trains cfg for twenty steps on the device runtime dev and on the CPU, from the same weights and
// batch of shape sh: the losses agree at every step and every parameter
// ends within tol relative L2 of the CPU's.
func compareTraining(t *testing.T, dev *graph.Runtime, cfg model.Config, sh model.Shape, tol float64) {
	t.Helper()
	cpu, gpu := newRigs(t, cfg, sh, dev)
	for step := range 20 {
		stepBoth(t, step, cpu, gpu, tol)
	}
	if err := dev.Download(gpu.p); err != nil {
		t.Fatal(err)
	}
	for _, name := range cpu.p.Names() {
		if isKeyBias(name) {
			// A key bias adds the same score to every key of a query, which
			// softmax ignores: its gradient is 0 but for rounding, which
			// Adam scales up to whole steps, different on each device.
			for _, r := range []*Rig{cpu, gpu} {
				roundingOnly(t, r, name, tol)
			}
			continue
		}
		nearCPU(t, name, cpu.p.Value(name), gpu.p.Value(name), tol)
	}
}

// newRigs makes the rigs of cfg and sh on the CPU and on dev, from the same
// weights and batch.
func newRigs(t *testing.T, cfg model.Config, sh model.Shape, dev *graph.Runtime) (cpu, gpu *Rig) {
	t.Helper()
	cpu, err := NewRig(cfg, sh, graph.CPU())
	if err != nil {
		t.Fatal(err)
	}
	gpu, err = NewRig(cfg, sh, dev)
	if err != nil {
		t.Fatal(err)
	}
	return cpu, gpu
}

// stepBoth runs a training step on both rigs and fails t unless their
// losses agree within tol relative; it returns the CPU's loss.
func stepBoth(t *testing.T, step int, cpu, gpu *Rig, tol float64) float64 {
	t.Helper()
	for _, r := range []*Rig{cpu, gpu} {
		if err := r.TrainStep(); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
	}
	if a, b := lossOf(t, cpu.train), lossOf(t, gpu.train); math.Abs(a-b) > tol*math.Abs(a) {
		t.Fatalf("step %d: loss %g on the device, %g on the CPU", step, b, a)
	}
	return lossOf(t, cpu.train)
}

// isKeyBias reports whether the parameter name is an attention key's bias.
func isKeyBias(name string) bool { return strings.HasSuffix(name, "attn.k_proj.bias") }

// roundingOnly fails t unless the gradient of the key bias name is rounding
// beside the query bias's: of norm at most 10·tol times it.
func roundingOnly(t *testing.T, r *Rig, name string, tol float64) {
	t.Helper()
	if g, q := norm(r.train.Grad(name)), norm(r.train.Grad(strings.Replace(name, "k_proj", "q_proj", 1))); g > 10*tol*q {
		t.Errorf("%s: gradient of norm %g beside the query bias's %g: want rounding only", name, g, q)
	}
}

// nearCPU fails t unless the named parameter's values on the device, got,
// are within tol relative L2 of the CPU's, want.
func nearCPU(t *testing.T, name string, want, got *tensor.Dense, tol float64) {
	t.Helper()
	w, g := graph.Float64s(want), graph.Float64s(got)
	var d float64
	for i := range w {
		d += (g[i] - w[i]) * (g[i] - w[i])
	}
	if n := norm(want); math.Sqrt(d) > tol*n {
		t.Errorf("%s: relative L2 distance %.3g from the CPU's", name, math.Sqrt(d)/n)
	}
}

// TestDeviceTrainerRun: Trainer.Run on the simulated device, two batches
// accumulated per update and a clip of 1.5 that acts at steps 1 and 2
// only (global norms 2.25, 2.12, 1.06, below 1: Adam is blind to a clip
// that acts at every step), saves at
// steps 2 and 4; cut back to step 2 and resumed on the same parameters
// (whose device copies hold step 4's values, which the resumed values must
// replace), it ends within 1e-5 relative L2 of a run on the CPU, and its
// last evaluation (scoring and decoding on the device's copies) gives the
// CPU's validation loss. So does a run of one batch per update, from its
// program's own gradients.
func TestDeviceTrainerRun(t *testing.T) {
	dev := simtest.Runtime(t)
	for _, accumulate := range []int{2, 1} {
		t.Run(fmt.Sprintf("accumulate %d", accumulate), func(t *testing.T) { testTrainerRun(t, dev, accumulate) })
	}
}

// testTrainerRun is TestDeviceTrainerRun with accumulate batches per update.
func testTrainerRun(t *testing.T, dev *graph.Runtime, accumulate int) {
	const steps = 4
	run := func(rt *graph.Runtime) (fixture, string) {
		f, dir := smallFixture(t), t.TempDir()
		o := options(dir, steps)
		o.EvalEvery, o.SaveEvery, o.ClipNorm, o.Accumulate, o.Runtime = steps, 2, 1.5, accumulate, rt
		for _, resume := range []bool{false, true} {
			tr, err := New(f.m, f.params, f.data, o, Quiet)
			if err != nil {
				t.Fatal(err)
			}
			if resume {
				if r, err := tr.Resume(dir); err != nil || r.Step != 2 {
					t.Fatalf("resumed at step %d: %v, want step 2", r.Step, err)
				}
			}
			if err := tr.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			if rt == nil {
				break
			}
			last := stepPath(filepath.Join(dir, "checkpoints"), steps)
			for _, path := range []string{last, statePath(last)} {
				if err := os.Remove(path); err != nil {
					t.Fatal(err)
				}
			}
		}
		return f, dir
	}
	cpu, cpuDir := run(nil)
	onDev, devDir := run(dev)
	for _, name := range cpu.params.Names() {
		// The key biases' gradients are rounding (TestDeviceTraining).
		if !strings.HasSuffix(name, "attn.k_proj.bias") {
			nearCPU(t, name, cpu.params.Value(name), onDev.params.Value(name), 1e-5)
		}
	}
	var loss [2]float64
	for i, dir := range []string{cpuDir, devDir} {
		ms, err := ReadMetrics(filepath.Join(dir, "metrics.jsonl"))
		if err != nil || len(ms) == 0 || ms[len(ms)-1].Step != steps {
			t.Fatalf("%s: metrics %+v: %v, want step %d's", dir, ms, err, steps)
		}
		loss[i] = ms[len(ms)-1].ValLoss
	}
	if math.Abs(loss[1]-loss[0]) > 1e-5*loss[0] {
		t.Errorf("validation loss %v on the device, %v on the CPU", loss[1], loss[0])
	}
}

// smallFixture is newFixture with batches of at most 20 tokens, one
// validation batch and two held-out examples: cheap on the simulated device.
func smallFixture(t *testing.T) fixture {
	f := newFixture(t)
	task, err := data.NewTask("copy", data.TaskConfig{Symbols: 6, MinLen: 1, MaxLen: 5})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	train := make([]data.Example, 64)
	for i := range train {
		train[i] = task.Sample(rng)
	}
	if f.data.Train, err = data.NewBatcher(train, data.BatchConfig{MaxTokens: 20, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	f.data.Valid, f.data.HeldOut = f.data.Valid[:1], f.data.HeldOut[:2]
	return f
}

// norm is the L2 norm of t.
func norm(t *tensor.Dense) float64 {
	var s float64
	for _, v := range graph.Float64s(t) {
		s += v * v
	}
	return math.Sqrt(s)
}

// lossOf is p's loss after its last run, failing t if it has none.
func lossOf(t testing.TB, p *graph.Program) float64 {
	t.Helper()
	l, err := p.Loss()
	if err != nil {
		t.Fatal(err)
	}
	return l
}
