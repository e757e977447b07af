package graph

import (
	"sync"

	"github.com/pkg/errors"
)

// Backend is a device that programs run on: a GPU, or a simulation of one.
// It holds memory, copies to and from the host, launches the kernels of the
// registered device modules (RegisterDeviceModule) by handle, runs matrix
// products, and records work to replay it. Its work runs in the order it is
// given, as on one CUDA stream; its calls are made one at a time.
//
// A backend registers itself under a device name (RegisterBackend), as
// database/sql drivers do: importing graph/cuda registers "cuda". graph's
// programs, runtimes and scopes name no backend: a Runtime is given one
// (NewRuntime, NewBackendRuntime), and its programs' nodes run their ops'
// DeviceKernels on it.
type Backend interface {
	// Name says which device this is, for logs.
	Name() string
	// Alloc returns bytes of device memory, not initialized.
	Alloc(bytes int) (DevicePtr, error)
	// Free releases what Alloc returned.
	Free(p DevicePtr) error
	// ToDevice copies src to dst after the work before it; the caller may
	// change src once it returns.
	ToDevice(dst DevicePtr, src []byte) error
	// ToHost copies src into dst once the work before it has ended.
	ToHost(dst []byte, src DevicePtr) error
	// Launch launches l, checked (Launch.Check, and its pointers null or in
	// live memory) before anything runs.
	Launch(l *Launch) error
	// Gemm runs the products g, checked before anything runs.
	Gemm(g *DeviceGEMM) error
	// Sync waits for the work given so far.
	Sync() error
	// Record records the launches and products that work makes through
	// this backend, checking them, and returns their replay: a CUDA graph
	// on a GPU. Work it records may run while it is recorded or not; only
	// Replay.Run is sure to run it.
	Record(work func() error) (Replay, error)
	// Close frees everything the backend holds.
	Close() error
}

// Replay is recorded work (Backend.Record), run again with the same
// arguments; what changes between runs is in device memory.
type Replay interface {
	// Run runs the recorded work after the work before it.
	Run() error
	// Close frees the recording.
	Close() error
}

// backends are the registered backends' openers by device name.
var backends struct {
	sync.Mutex
	open map[Device]func() (Backend, error)
}

// RegisterBackend makes open the opener of the device name, which NewRuntime
// calls for a runtime on that device; open must fail, naming what is
// missing, when the device cannot be used. A backend registers itself when
// its package is initialized; a name registered twice panics, as
// database/sql's Register does.
func RegisterBackend(name Device, open func() (Backend, error)) {
	backends.Lock()
	defer backends.Unlock()
	if name == "" || name == DeviceCPU || name == DeviceAuto {
		panic("graph: RegisterBackend: " + string(name) + " names no device backend")
	}
	if _, dup := backends.open[name]; dup {
		panic("graph: RegisterBackend called twice for " + string(name))
	}
	if backends.open == nil {
		backends.open = map[Device]func() (Backend, error){}
	}
	backends.open[name] = open
}

// openBackend opens the backend registered as name.
func openBackend(name Device) (Backend, error) {
	backends.Lock()
	open, ok := backends.open[name]
	backends.Unlock()
	if !ok {
		return nil, errors.Errorf("no backend for %s is registered: the program must import its package "+
			"(import _ \"github.com/transformer-go/transformer/graph/cuda\")", name)
	}
	return open()
}
