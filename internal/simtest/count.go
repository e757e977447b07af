package simtest

import (
	"sync/atomic"
	"testing"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/graph/cuda"
)

// Replays counts a backend's recordings and the runs of their replays.
type Replays struct {
	Recorded, Replayed atomic.Int64
}

// counting is a backend whose recordings are counted.
type counting struct {
	graph.Backend
	c *Replays
}

// Record implements graph.Backend.
func (b counting) Record(work func() error) (graph.Replay, error) {
	r, err := b.Backend.Record(work)
	if err != nil {
		return nil, err
	}
	b.c.Recorded.Add(1)
	return countedReplay{r, b.c}, nil
}

// countedReplay is a replay whose runs are counted.
type countedReplay struct {
	graph.Replay
	c *Replays
}

// Run implements graph.Replay.
func (r countedReplay) Run() error {
	r.c.Replayed.Add(1)
	return r.Replay.Run()
}

// Counted is Runtime's simulated device with its recordings and replays
// counted.
func Counted(t testing.TB) (*graph.Runtime, *Replays) {
	t.Helper()
	needGXX(t)
	sim, err := cuda.OpenSim(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return counted(t, sim)
}

// CountedGPU is GPU's device with its recordings and replays counted; it
// skips t where no GPU is usable, as GPU does.
func CountedGPU(t testing.TB) (*graph.Runtime, *Replays) {
	t.Helper()
	d, err := cuda.Open()
	if err != nil {
		t.Skipf("no usable GPU (scripts/gpu/run.sh runs this test on a GPU machine): %v", err)
	}
	return counted(t, d)
}

// counted is a float32 runtime on b, its recordings counted, closed when t
// ends.
func counted(t testing.TB, b graph.Backend) (*graph.Runtime, *Replays) {
	t.Helper()
	c := &Replays{}
	rt, err := graph.NewBackendRuntime(graph.DeviceCUDA, counting{b, c}, graph.Float32)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := rt.Close(); err != nil {
			t.Error(err)
		}
	})
	return rt, c
}
