package graph

import (
	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/internal/sysmem"
)

// Runtime is where and how compiled programs run: the device, the precision
// of their matrix products, and the memory they run in, within its
// MemoryLimit. On the CPU that is the arena in which every program compiled
// on it lays out its intermediate tensors, and the copies of the weights
// packed for its matrix products, which its programs share while the
// weights' versions stay the same (see Params.Updated); on a device, a
// Backend's memory, with the parameters' copies that its programs share. It
// is a property of programs, not of a graph or a model: one graph, one op
// set and one parameter store compile onto runtimes of any device and
// precision.
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
	// active is the program that ran last, whose values are readable.
	active *Program
	limit  MemoryLimit
	// at is where the programs run: the CPU, or a backend.
	at target
}

// target is where a runtime's programs run and keep their memory: the
// host's (hostTarget) or a backend's (deviceTarget). Everything a runtime
// or a program does that depends on it goes through this interface.
type target interface {
	// compile makes the executor of p, whose machine runs the graph's nodes
	// in order with registers regs.
	compile(p *Program, s *Scope, order G.Nodes, regs map[*G.Node]any) (executor, error)
	// engine is the tensor engine of the programs' machines.
	engine() tensor.Engine
	// arenaBytes is the memory the programs' intermediate tensors take.
	arenaBytes() int
	// copiedToHost counts the bytes the programs' values crossed to the host.
	copiedToHost() int
	// download brings stores' values that are newer on the device home.
	download(stores ...*Params) error
	// newSums are zero sums of the gradients of names.
	newSums(params *Params, names []string) (sums, error)
	// adam is Adam's step s of g.names from the gradients g.
	adam(params, m, v *Params, g gradSet, s AdamStep) error
	// sumSquares is Σ g² over the gradients g.
	sumSquares(g gradSet) (float64, error)
	// setReplays bounds the programs' recordings kept (Runtime.SetReplays).
	setReplays(n int) error
	// sibling is a target sharing this one's device and parameters.
	sibling() target
	close() error
}

// NewRuntime returns a runtime on device d whose programs multiply in
// precision p. It opens the device before anything is compiled, so that a
// device that cannot be used is an error here, naming what is missing:
// DeviceAuto falls back to the CPU instead, and Fallback says why. A device
// other than the CPU is a Backend that a package registers (graph/cuda:
// DeviceCUDA); there, every op of a program needs device kernels
// (Op.Device), and Close frees what the runtime holds.
func NewRuntime(d Device, p Precision) (*Runtime, error) {
	if err := p.valid(); err != nil {
		return nil, err
	}
	b, fallback, err := d.open()
	if err != nil {
		return nil, err
	}
	if b != nil {
		return NewBackendRuntime(DeviceCUDA, b, p)
	}
	rt := CPU()
	rt.precision, rt.fallback = p, fallback
	return rt, nil
}

// NewBackendRuntime returns a runtime whose programs run on the backend b,
// named d (Device), with products in precision p: a backend made by hand,
// such as graph/cuda's simulated device for tests. Close closes b.
func NewBackendRuntime(d Device, b Backend, p Precision) (*Runtime, error) {
	if err := p.valid(); err != nil {
		return nil, err
	}
	if b == nil || d == DeviceCPU || d == DeviceAuto {
		return nil, errors.Errorf("a runtime on a backend needs a backend and its device's name, have %v and %q", b, d)
	}
	return &Runtime{device: d, precision: p, limit: sysmem.Process{}, at: newDeviceTarget(b)}, nil
}

// Sibling returns a runtime on rt's device (rt nil: CPU's), in its
// precision and under its memory limit, whose programs lay their tensors
// out apart from rt's: what a program of rt computed stays valid while the
// sibling's programs run, and the other way round, as an ensemble's
// models, run in turn at every decoding step, need. On a device it shares
// rt's backend and copies of the parameters: closing it frees only what it
// allocated itself, and rt's Close frees the rest.
func (rt *Runtime) Sibling() *Runtime {
	if rt == nil {
		return CPU()
	}
	return &Runtime{device: rt.device, precision: rt.precision, fallback: rt.fallback, limit: rt.limit, at: rt.at.sibling()}
}

// CPU returns a runtime on the CPU with float32 products: the default, and
// what a program compiled without one runs on.
func CPU() *Runtime {
	return &Runtime{device: DeviceCPU, precision: Float32, limit: sysmem.Process{}, at: &hostTarget{}}
}

// Device is the device the runtime's programs run on: DeviceCPU or
// DeviceCUDA, never DeviceAuto.
func (rt *Runtime) Device() Device { return rt.device }

// Precision is the precision of the runtime's matrix products.
func (rt *Runtime) Precision() Precision { return rt.precision }

// Fallback says why a runtime asked for DeviceAuto runs on the CPU, "" if it
// was not asked for DeviceAuto or found a usable GPU.
func (rt *Runtime) Fallback() string { return rt.fallback }

// ArenaBytes is the memory the runtime's programs lay their intermediate
// tensors out in on the host: that of the largest program run so far (0 on
// a device, where each program has memory of its own).
func (rt *Runtime) ArenaBytes() int { return rt.at.arenaBytes() }

// CopiedToHost is how many bytes of its programs' values (outputs, losses,
// gradients) the runtime has copied from its device to the host as they
// were read; 0 on the CPU.
func (rt *Runtime) CopiedToHost() int { return rt.at.copiedToHost() }

// Download copies the values of the parameters of stores whose device
// copies are newer than the host's (Adam on a device) to the host, for the
// host to read (a checkpoint, say). A CPU runtime has nothing to copy.
func (rt *Runtime) Download(stores ...*Params) error { return rt.at.download(stores...) }

// String describes the runtime as "cpu float32".
func (rt *Runtime) String() string { return string(rt.device) + " " + string(rt.precision) }

// activate makes p the runtime's running program: the program that ran
// before lets go of its values, and p takes its memory.
func (rt *Runtime) activate(p *Program) {
	if a := rt.active; a != p {
		if a != nil {
			a.release()
		}
		p.exec.activate()
		rt.active = p
	}
}

// forget drops p, a program being closed or given memory of its own.
func (rt *Runtime) forget(p *Program) {
	if rt.active == p {
		rt.active = nil
	}
}

// Close frees what the runtime holds on its device (the parameters' copies)
// and closes the backend; a CPU runtime holds nothing, and a Sibling only
// its own memory. Its programs must be closed first.
func (rt *Runtime) Close() error { return errors.Wrap(rt.at.close(), "closing the device") }
