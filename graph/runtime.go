package graph

import (
	"github.com/pkg/errors"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph/internal/cuda"

	"github.com/transformer-go/transformer/internal/sysmem"
)

// Runtime is where and how compiled programs run: the device, the precision
// of their matrix products, and the memory they run in, within its
// MemoryLimit: the arena in which every program compiled on it lays out its
// intermediate tensors, and the copies of the weights packed for its matrix
// products, which its programs share while the weights' versions stay the
// same (see Params.Updated). It is a property of programs, not of a graph or
// a model: one graph, one op set and one parameter store compile onto
// runtimes of any device and precision.
//
// Programs compiled on one Runtime share its memory, so only one of them
// runs at a time and what a program computed is valid only until another
// program of the runtime runs (see Program.Run). A Runtime is not safe for
// concurrent use.
type Runtime struct {
	device    Device
	precision Precision
	// fallback says why an Auto device runs on the CPU ("" otherwise).
	fallback string
	// active is the program that ran last, the one whose tensors lie in
	// arena.
	active *Program
	arena  arena
	packs  packCache
	limit  MemoryLimit
	// cuda is the device a DeviceCUDA runtime's programs run on, and
	// params the parameters' buffers there, shared by its programs.
	cuda   cuda.Device
	params map[*tensor.Dense]*deviceParam
	// sibling: the runtime is another's Sibling, whose device and
	// parameters' copies it shares and leaves to that one's Close.
	sibling bool
	// copiedToHost counts the bytes its programs' values read from the device.
	copiedToHost int
	// scratch is device memory for reductions (sums of squares), grown as
	// needed.
	scratch []scratchBuf
}

// NewRuntime returns a runtime on device d whose programs multiply in
// precision p. It opens the device before anything is compiled, so that a
// device that cannot be used is an error here, naming what is missing:
// DeviceAuto falls back to the CPU instead, and Fallback says why. On a GPU
// (DeviceCUDA), every op of a program needs device kernels (Op.Device);
// Close frees what the runtime holds there.
func NewRuntime(d Device, p Precision) (*Runtime, error) {
	if err := p.valid(); err != nil {
		return nil, err
	}
	dev, gpu, fallback, err := d.open()
	if err != nil {
		return nil, err
	}
	if gpu != nil {
		return onDevice(gpu, p), nil
	}
	return &Runtime{device: dev, precision: p, fallback: fallback, limit: sysmem.Process{}}, nil
}

// onDevice returns a runtime whose programs run on dev with products in
// precision p.
func onDevice(dev cuda.Device, p Precision) *Runtime {
	return &Runtime{device: DeviceCUDA, precision: p, limit: sysmem.Process{}, cuda: dev, params: map[*tensor.Dense]*deviceParam{}}
}

// Sibling returns a runtime on rt's device (rt nil: CPU's), in its
// precision and under its memory limit, whose programs lay their tensors
// out apart from rt's: what a program of rt computed stays valid while the
// sibling's programs run, and the other way round, as an ensemble's
// models, run in turn at every decoding step, need. On a GPU it shares rt's
// device and copies of the parameters: closing it frees only what it
// allocated itself, and rt's Close frees the rest.
func (rt *Runtime) Sibling() *Runtime {
	if rt == nil {
		return CPU()
	}
	return &Runtime{device: rt.device, precision: rt.precision, fallback: rt.fallback, limit: rt.limit,
		cuda: rt.cuda, params: rt.params, sibling: true}
}

// CPU returns a runtime on the CPU with float32 products: the default, and
// what a program compiled without one runs on.
func CPU() *Runtime { return &Runtime{device: DeviceCPU, precision: Float32, limit: sysmem.Process{}} }

// Device is the device the runtime's programs run on: DeviceCPU or
// DeviceCUDA, never DeviceAuto.
func (rt *Runtime) Device() Device { return rt.device }

// Precision is the precision of the runtime's matrix products.
func (rt *Runtime) Precision() Precision { return rt.precision }

// Fallback says why a runtime asked for DeviceAuto runs on the CPU, "" if it
// was not asked for DeviceAuto or found a usable GPU.
func (rt *Runtime) Fallback() string { return rt.fallback }

// ArenaBytes is the memory the runtime's programs lay their intermediate
// tensors out in: that of the largest program run so far.
func (rt *Runtime) ArenaBytes() int {
	return 4*len(rt.arena.f32) + 8*len(rt.arena.f64) + 8*len(rt.arena.ints)
}

// CopiedToHost is how many bytes of its programs' values (outputs, losses,
// gradients) the runtime has copied from its device to the host as they
// were read; 0 on the CPU.
func (rt *Runtime) CopiedToHost() int { return rt.copiedToHost }

// String describes the runtime as "cpu float32".
func (rt *Runtime) String() string { return string(rt.device) + " " + string(rt.precision) }

// activate makes p the runtime's running program: the program that ran
// before lets go of its tensors, and p's are laid out in the arena.
func (rt *Runtime) activate(p *Program) {
	if a := rt.active; a != p {
		if a != nil {
			a.release()
		}
		if !p.own {
			rt.arena.bind(p)
		}
		rt.active = p
	}
}

// forget drops p, a program being closed or given memory of its own.
func (rt *Runtime) forget(p *Program) {
	if rt.active == p {
		rt.active = nil
	}
	delete(rt.arena.users, p)
}

// Close frees what the runtime holds on its device (the parameters' copies)
// and closes the device; a CPU runtime holds nothing, and a Sibling only
// its scratch memory. Its programs must be closed first.
func (rt *Runtime) Close() error {
	if rt.cuda == nil {
		return nil
	}
	if rt.sibling {
		err := freeScratch(rt.cuda, rt.scratch)
		rt.cuda, rt.scratch = nil, nil
		return errors.Wrap(err, "closing the device")
	}
	var first error
	for t, p := range rt.params {
		if err := rt.cuda.Free(p.p); err != nil && first == nil {
			first = err
		}
		delete(rt.params, t)
	}
	if err := freeScratch(rt.cuda, rt.scratch); err != nil && first == nil {
		first = err
	}
	if err := rt.cuda.Close(); err != nil && first == nil {
		first = err
	}
	rt.cuda, rt.scratch = nil, nil
	return errors.Wrap(first, "closing the device")
}
