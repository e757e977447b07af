package trainer

import (
	"math"
	"testing"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/internal/simtest"
	"github.com/transformer-go/transformer/model"
)

// TestDeviceReplayIsOpByOp: twenty training steps of tiny with dropout on
// the simulated device, replayed from the recording of the first (every
// step after the second), end with weights bit for bit those of twenty
// steps run op by op; a program of a new shape records again, and so does
// one whose recording the runtime let go of (SetReplays).
func TestDeviceReplayIsOpByOp(t *testing.T) { checkReplay(t, simtest.Counted) }

// checkReplay is TestDeviceReplayIsOpByOp on the runtimes that open makes.
func checkReplay(t *testing.T, open func(testing.TB) (*graph.Runtime, *simtest.Replays)) {
	cfg, err := model.Preset("tiny", 40)
	if err != nil {
		t.Fatal(err)
	}
	sh := model.Shape{Batch: 2, SrcLen: 4, TgtLen: 3}
	replayed, c := open(t)
	opByOp, o := open(t)
	if err := opByOp.SetReplays(0); err != nil {
		t.Fatal(err)
	}
	a, b := trainRig(t, cfg, sh, replayed), trainRig(t, cfg, sh, opByOp)
	if got := c.Recorded.Load(); got != 1 {
		t.Errorf("%d recordings of the training program, want 1", got)
	}
	if got := c.Replayed.Load(); got != 19 {
		t.Errorf("%d steps replayed, want 19: the first runs the machine and records", got)
	}
	if got := o.Recorded.Load() + o.Replayed.Load(); got != 0 {
		t.Errorf("SetReplays(0): %d recordings and replays, want none", got)
	}
	for _, name := range a.p.Names() {
		x, y := graph.Float64s(a.p.Value(name)), graph.Float64s(b.p.Value(name))
		for i := range x {
			if math.Float64bits(x[i]) != math.Float64bits(y[i]) {
				t.Fatalf("%s[%d]: %v replayed, %v op by op", name, i, x[i], y[i])
			}
		}
	}
	recordsAgain(t, cfg, replayed, c)
}

// trainRig runs twenty training steps of cfg at shape sh on rt and
// downloads the weights.
func trainRig(t *testing.T, cfg model.Config, sh model.Shape, rt *graph.Runtime) *Rig {
	t.Helper()
	cfg.Dropout = 0.1
	r, err := NewRig(cfg, sh, rt)
	if err != nil {
		t.Fatal(err)
	}
	for step := range 20 {
		if err := r.TrainStep(); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
	}
	if err := rt.Download(r.p); err != nil {
		t.Fatal(err)
	}
	return r
}

// recordsAgain: on rt (whose recordings c counts), a program of a new shape
// records at its second run, and with room for one recording, two
// programs run in turn record again at every run.
func recordsAgain(t *testing.T, cfg model.Config, rt *graph.Runtime, c *simtest.Replays) {
	r, err := NewRig(cfg, model.Shape{Batch: 1, SrcLen: 3, TgtLen: 2}, rt)
	if err != nil {
		t.Fatal(err)
	}
	before := c.Recorded.Load()
	for range 2 {
		if err := r.Forward(); err != nil {
			t.Fatal(err)
		}
	}
	if got := c.Recorded.Load() - before; got != 1 {
		t.Errorf("a program of a new shape: %d recordings, want 1", got)
	}
	for range 2 {
		if err := r.TrainStep(); err != nil {
			t.Fatal(err)
		}
	}
	if err := rt.SetReplays(1); err != nil {
		t.Fatal(err)
	}
	before = c.Recorded.Load()
	for range 3 {
		for _, step := range []func() error{r.Forward, r.TrainStep} {
			if err := step(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got := c.Recorded.Load() - before; got != 6 {
		t.Errorf("two programs in turn, room for one recording: %d recordings in 3 rounds, want 6", got)
	}
}
