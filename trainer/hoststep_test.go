package trainer

import (
	"fmt"
	"testing"

	"github.com/transformer-go/transformer/internal/hostcost"
	"github.com/transformer-go/transformer/model"
)

// BenchmarkDeviceHostStep runs base (vocabulary 8,000, sources and targets
// of 64 tokens) on graph/cuda's recording device, which makes every check a
// GPU's calls make and executes nothing, so that what it measures is the
// host's side of a step on a GPU: per training step (forward, backward,
// Adam) or forward pass, the host's CPU time and the calls a GPU would be
// given, op by op (every run runs the machine) and replayed (every run
// after the second replays the first's recording).
func BenchmarkDeviceHostStep(b *testing.B) {
	for _, mode := range []string{"op-by-op", "replay"} {
		for _, batch := range []int{16, 64, 128} {
			b.Run(fmt.Sprintf("step=train/mode=%s/batch=%d", mode, batch), func(b *testing.B) {
				hostSteps(b, mode, batch, (*Rig).TrainStep)
			})
		}
		b.Run(fmt.Sprintf("step=forward/mode=%s/batch=64", mode), func(b *testing.B) {
			hostSteps(b, mode, 64, (*Rig).Forward)
		})
	}
}

// hostSteps times step of a base Rig at batch×64 tokens on a recording
// device in mode, after two untimed steps, and reports its metrics.
func hostSteps(b *testing.B, mode string, batch int, step func(*Rig) error) {
	cfg, err := model.Preset("base", 8000)
	if err != nil {
		b.Fatal(err)
	}
	rt, rec := hostcost.Runtime(b, mode)
	r, err := NewRig(cfg, model.Shape{Batch: batch, SrcLen: 64, TgtLen: 64}, rt)
	if err != nil {
		b.Fatal(err)
	}
	for range 2 {
		if err := step(r); err != nil {
			b.Fatal(err)
		}
	}
	rec.Reset()
	cpu := hostcost.CPUTime()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := step(r); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	hostcost.Report(b, b.N, hostcost.CPUTime()-cpu, rec.Counts())
}
