package trainer

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/model"
)

// TestRigForwardSeesTraining checks that the weights that Forward's passes
// read packed are never read once a training step changed them: the first
// pass after a step (which reads the weights as they are, or packed anew)
// gives what the passes after it (which read them packed) give, and the
// pass after the next step differs; in float32 and with bfloat16 products,
// whose packed weights are bfloat16.
func TestRigForwardSeesTraining(t *testing.T) {
	for _, prec := range graph.Precisions {
		t.Run(string(prec), func(t *testing.T) { testRigForwardSeesTraining(t, prec) })
	}
}

func testRigForwardSeesTraining(t *testing.T, prec graph.Precision) {
	cfg, err := model.Preset("tiny", 50)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := graph.NewRuntime(graph.DeviceCPU, prec)
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRig(cfg, model.Shape{Batch: 7, SrcLen: 9, TgtLen: 8}, rt)
	if err != nil {
		t.Fatal(err)
	}
	scores := func() []float32 {
		return slices.Clone(r.fwd.Output(model.TargetScores).Data().([]float32))
	}
	for _, step := range []func() error{r.Forward, r.Forward, r.Forward, r.TrainStep, r.Forward} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	first := scores()
	for range 2 {
		if err := r.Forward(); err != nil {
			t.Fatal(err)
		}
		if got := scores(); !slices.Equal(first, got) {
			t.Fatal("a forward pass with the weights packed after a training step differs from the first pass after it")
		}
	}
	if err := r.TrainStep(); err != nil {
		t.Fatal(err)
	}
	if err := r.Forward(); err != nil {
		t.Fatal(err)
	}
	if slices.Equal(first, scores()) {
		t.Error("a forward pass after a training step gives what the pass before it gave")
	}
}

// TestPairsSummary sums up made-up pairs of step durations: the medians'
// speeds, and the median and range of the pairs' ratios, which need not be
// the ratio of the medians.
func TestPairsSummary(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		d := make([]time.Duration, len(v))
		for i, x := range v {
			d[i] = time.Duration(x) * time.Millisecond
		}
		return d
	}
	s := pairsOf(ms(100, 400, 300), ms(50, 100, 250), 1000)
	want := Pairs{ATokensPerS: 1000 / 0.3, BTokensPerS: 1000 / 0.1, Ratio: 2, Low: 1.2, High: 4}
	if math.Abs(s.ATokensPerS-want.ATokensPerS) > 1e-9 || math.Abs(s.BTokensPerS-want.BTokensPerS) > 1e-9 ||
		math.Abs(s.Ratio-2) > 1e-12 || math.Abs(s.Low-1.2) > 1e-12 || math.Abs(s.High-4) > 1e-12 {
		t.Fatalf("pairs %+v, want %+v", s, want)
	}
	r := &Rig{}
	if _, err := r.MeasureScaling(0, 1, 1); err == nil {
		t.Error("scaling measured from one core to one core")
	}
	if _, err := MeasurePairs(r.TrainStep, r.TrainStep, 0, 0, 1); err == nil {
		t.Error("no pairs measured")
	}
}
