package cuda

import (
	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/graph"
)

// init registers the CUDA device as graph.DeviceCUDA: a program that
// imports this package runs on a GPU when asked for -device cuda.
func init() {
	graph.RegisterBackend(graph.DeviceCUDA, func() (graph.Backend, error) {
		d, err := Open()
		if err != nil {
			return nil, err
		}
		return d, nil
	})
}

// NewSimulatedRuntime returns a runtime whose programs run on the simulated
// device (OpenSim), built in dir, with products in precision p: for tests
// and CI, which check programs on a device without a GPU
// (graph.DeviceCheck); no command reaches it. Close it to free what it
// holds.
func NewSimulatedRuntime(dir string, p graph.Precision) (*graph.Runtime, error) {
	s, err := OpenSim(dir)
	if err != nil {
		return nil, errors.Wrap(err, "device")
	}
	rt, err := graph.NewBackendRuntime(graph.DeviceCUDA, s, p)
	if err != nil {
		_ = s.Close() // the error above says what matters
	}
	return rt, err
}

// NewRecordingRuntime returns a runtime whose programs run on a Recorder,
// with products in precision p, and the Recorder.
func NewRecordingRuntime(p graph.Precision) (*graph.Runtime, *Recorder, error) {
	r := NewRecorder()
	rt, err := graph.NewBackendRuntime(graph.DeviceCUDA, r, p)
	return rt, r, err
}
