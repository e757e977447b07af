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
	c := &Replays{}
	rt, err := graph.NewBackendRuntime(graph.DeviceCUDA, counting{sim, c}, graph.Float32)
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
