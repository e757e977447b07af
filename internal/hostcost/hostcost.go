// Package hostcost measures what BenchmarkDeviceHostStep reports: the
// host's CPU time of steps run on graph/cuda's recording device, and the
// calls a GPU would have been given.
package hostcost

import (
	"syscall"
	"testing"
	"time"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/graph/cuda"
)

// CPUTime is the process's CPU time so far, user and system.
func CPUTime() time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// Report reports per step of b, of steps in all, the host's CPU time cpu
// and the calls c of a recording device: host-ms/step, gemms/step,
// launches/step, adam-launches/step, h2d/step, d2h/step and replays/step.
func Report(b *testing.B, steps int, cpu time.Duration, c cuda.Counts) {
	n := float64(steps)
	b.ReportMetric(cpu.Seconds()*1e3/n, "host-ms/step")
	b.ReportMetric(float64(c.GEMMs)/n, "gemms/step")
	b.ReportMetric(float64(c.Launches)/n, "launches/step")
	b.ReportMetric(float64(c.ByKernel["graph.adam_multi_f32"])/n, "adam-launches/step")
	b.ReportMetric(float64(c.HostToDevice)/n, "h2d/step")
	b.ReportMetric(float64(c.DeviceToHost)/n, "d2h/step")
	b.ReportMetric(float64(c.Replays)/n, "replays/step")
}

// Runtime is a float32 runtime on a recording device, closed when b ends:
// it replays its programs, or runs them op by op when mode is "op-by-op".
func Runtime(b *testing.B, mode string) (*graph.Runtime, *cuda.Recorder) {
	rt, rec, err := cuda.NewRecordingRuntime(graph.Float32)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { rt.Close() })
	if mode == "op-by-op" {
		if err := rt.SetReplays(0); err != nil {
			b.Fatal(err)
		}
	}
	return rt, rec
}
