package cuda

import (
	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/graph"
)

// Recorder is a device that makes every check a GPU's calls make (kernels'
// arguments, pointers in live memory, products' sizes and memory) and
// counts every call, but executes nothing: its memory is addresses only, a
// copy to the host gives zeros, and a recording's replay runs nothing. It
// implements graph.Backend, to measure the host's cost of running programs
// on a device, and how many launches, products and copies they make, on a
// machine without a GPU (BenchmarkDeviceHostStep).
type Recorder struct {
	*core
	// Fill, if set, writes what a copy to the host reads, which is zeros
	// otherwise: values that keep a decoder going, say.
	Fill      func(dst []byte)
	next      graph.DevicePtr
	recording bool
	counts    counts
}

// counts are a Recorder's counts, by kernel for launches.
type counts struct {
	Counts
	byKernel map[*graph.DeviceKernel]int
}

// Counts are the calls a Recorder has seen. Launches and GEMMs exclude the
// work recorded for replays (Record), whose runs Replays counts as one call
// each.
type Counts struct {
	// Launches are kernel launches, GEMMs calls of Gemm (a batched product
	// is one).
	Launches, GEMMs int
	// HostToDevice and DeviceToHost are copies each way.
	HostToDevice, DeviceToHost int
	// Replays are the runs of recordings.
	Replays int
	// ByKernel are the launches by kernel ("module.kernel").
	ByKernel map[string]int
}

// recorderBase is where the Recorder's addresses start.
const recorderBase = 1 << 40

// NewRecorder returns a recording device.
func NewRecorder() *Recorder {
	return &Recorder{core: newCore(), next: recorderBase, counts: counts{byKernel: map[*graph.DeviceKernel]int{}}}
}

// Counts are the calls so far.
func (r *Recorder) Counts() Counts {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.counts.Counts
	c.ByKernel = map[string]int{}
	for k, n := range r.counts.byKernel {
		c.ByKernel[k.String()] = n
	}
	return c
}

// Reset sets the counts to zero.
func (r *Recorder) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.counts.Counts = Counts{}
	clear(r.counts.byKernel)
}

// Name implements graph.Backend.
func (r *Recorder) Name() string { return "recording (checks and counts, executes nothing)" }

// Alloc implements graph.Backend: addresses, a granule apart.
func (r *Recorder) Alloc(n int) (graph.DevicePtr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n <= 0 {
		return 0, errors.Errorf("recorder: alloc: %d bytes", n)
	}
	p := r.next
	r.next = r.next.Add(rounded(n) + granule)
	return p, r.allocs.add(p, n)
}

// Free implements graph.Backend.
func (r *Recorder) Free(p graph.DevicePtr) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return errors.Wrap(r.allocs.remove(p), "recorder")
}

// ToDevice implements graph.Backend.
func (r *Recorder) ToDevice(dst graph.DevicePtr, src []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.checkCopy("recorder: to device", dst, len(src)); err != nil {
		return err
	}
	r.counts.HostToDevice++
	return nil
}

// ToHost implements graph.Backend: dst becomes zeros, or what Fill writes.
func (r *Recorder) ToHost(dst []byte, src graph.DevicePtr) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.checkCopy("recorder: to host", src, len(dst)); err != nil {
		return err
	}
	clear(dst)
	if r.Fill != nil {
		r.Fill(dst)
	}
	r.counts.DeviceToHost++
	return nil
}

// Launch implements graph.Backend.
func (r *Recorder) Launch(l *graph.Launch) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.checkLaunch(l); err != nil {
		return errors.Wrap(err, "recorder")
	}
	if !r.recording {
		r.counts.Launches++
		r.counts.byKernel[l.Kernel]++
	}
	return nil
}

// Gemm implements graph.Backend.
func (r *Recorder) Gemm(g *graph.DeviceGEMM) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.checkGemm(g); err != nil {
		return errors.Wrap(err, "recorder")
	}
	if !r.recording {
		r.counts.GEMMs++
	}
	return nil
}

// Sync implements graph.Backend.
func (r *Recorder) Sync() error { return nil }

// Record implements graph.Backend: it makes the work's calls once, checked
// but not counted.
func (r *Recorder) Record(work func() error) (graph.Replay, error) {
	r.mu.Lock()
	r.recording = true
	r.mu.Unlock()
	err := work()
	r.mu.Lock()
	r.recording = false
	r.mu.Unlock()
	if err != nil {
		return nil, errors.Wrap(err, "recording")
	}
	return recording{r}, nil
}

// recording is a Recorder's replay, which counts its runs.
type recording struct{ r *Recorder }

// Run implements graph.Replay.
func (c recording) Run() error {
	c.r.mu.Lock()
	defer c.r.mu.Unlock()
	c.r.counts.Replays++
	return nil
}

// Close implements graph.Replay.
func (c recording) Close() error { return nil }

// Close implements graph.Backend.
func (r *Recorder) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.allocs = newAllocs()
	return nil
}
