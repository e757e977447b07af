package cuda

import (
	"bytes"
	"fmt"
	"io/fs"
	"runtime"
	"strings"
	"unsafe"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/graph"
)

// Config says where Open looks for its libraries and what it requires.
type Config struct {
	// DriverLibs and CublasLibs are the names or paths tried, in order.
	DriverLibs, CublasLibs []string
	// MinDriver is the CUDA version the driver must support, as
	// cuDriverGetVersion gives it (1000·major + 10·minor).
	MinDriver int
	// MinCapability is the least compute capability, 10·major + minor.
	MinCapability int
	// Ordinal is the GPU's number.
	Ordinal int
}

// DefaultConfig is what Open uses: the driver and cuBLAS 13, 12 or 11 where
// the dynamic loader finds them, a driver for CUDA 11.8 or later (the PTX is
// version 7.8), and a GPU of compute capability 8.0 or later (the PTX
// targets compute_80), the first one.
func DefaultConfig() Config {
	return Config{
		DriverLibs:    []string{"libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libcuda.so.1", "/usr/lib64/libcuda.so.1", "/usr/lib/wsl/lib/libcuda.so.1"},
		CublasLibs:    []string{"libcublas.so.13", "libcublas.so.12", "libcublas.so.11"},
		MinDriver:     11080,
		MinCapability: 80,
	}
}

// CUDA is a GPU driven through the CUDA driver API and cuBLAS, loaded at
// run time; it implements graph.Backend. Its work runs on a stream of its
// own, with cuBLAS on that stream and a workspace of its own, so that it
// can be recorded as a CUDA graph (Record); copies to the device go through
// pinned memory of its own, asynchronously.
type CUDA struct {
	*core
	drv       *driver
	blas      *cublas
	dev       int32
	name      string
	ctx       uintptr
	stream    uintptr
	handle    uintptr
	workspace graph.DevicePtr
	// mods are the CUmodules of each device module, by its Index, one per
	// source file; funcs their kernels' functions, by their Index.
	mods  [][]uintptr
	funcs [][]uintptr
	// args holds a launch's argument slots and their addresses, in pinned
	// memory; stage is the pinned ring that copies to the device go
	// through.
	args  unsafe.Pointer
	stage staging
}

// staging is a ring of pinned host memory: a copy to the device is copied
// into it at head and from there asynchronously; when the ring is full, the
// stream is waited for and head starts again.
type staging struct {
	p    unsafe.Pointer
	size int
	head int
}

// Pinned memory and cuBLAS's workspace: stagingBytes for the ring,
// workspaceBytes for cuBLAS (what PyTorch gives it on Hopper).
const (
	stagingBytes   = 16 << 20
	workspaceBytes = 32 << 20
)

// Open opens the GPU with DefaultConfig.
func Open() (*CUDA, error) { return OpenConfig(DefaultConfig()) }

// OpenConfig loads the libraries, checks the driver's version, finds the
// GPU, checks its compute capability, and loads every kernel and cuBLAS,
// so that a program fails here, before any work, if anything is missing.
// Its errors name what is missing; errors.Cause of an error from the driver
// is a *DriverError (NoDevice: no GPU).
func OpenConfig(cfg Config) (*CUDA, error) {
	d := &CUDA{core: newCore(), dev: -1}
	// The context made current in open is this thread's; cuBLAS and the
	// modules are made in it.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := d.open(cfg); err != nil {
		if msg := d.release(); msg != "" {
			err = errors.Wrap(err, msg)
		}
		return nil, errors.Wrap(err, "cuda")
	}
	return d, nil
}

// open is OpenConfig's work; release undoes what it did.
func (d *CUDA) open(cfg Config) error {
	var err error
	if d.drv, err = loadDriver(cfg.DriverLibs); err != nil {
		return err
	}
	if d.blas, err = loadCublas(cfg.CublasLibs); err != nil {
		return err
	}
	var v int32
	if err := d.drv.check("cuDriverGetVersion", d.drv.cuDriverGetVersion(&v)); err != nil {
		return err
	}
	if int(v) < cfg.MinDriver {
		return errors.Errorf("the NVIDIA driver (%s) supports CUDA %s; the kernels need CUDA %s or later: update the driver",
			d.drv.lib.name, cudaVersion(int(v)), cudaVersion(cfg.MinDriver))
	}
	if err := d.drv.check("cuInit", d.drv.cuInit(0)); err != nil {
		return errors.Wrapf(err, "no usable GPU (driver for CUDA %s)", cudaVersion(int(v)))
	}
	if err := d.device(cfg); err != nil {
		return err
	}
	return d.load()
}

// cudaVersion writes a version as cuDriverGetVersion gives it as major.minor.
func cudaVersion(v int) string { return fmt.Sprintf("%d.%d", v/1000, v%1000/10) }

// device finds the GPU, checks it and makes its primary context current.
func (d *CUDA) device(cfg Config) error {
	var n, dev, major, minor int32
	if err := d.drv.check("cuDeviceGetCount", d.drv.cuDeviceGetCount(&n)); err != nil {
		return err
	}
	if cfg.Ordinal < 0 || cfg.Ordinal >= int(n) {
		return errors.Errorf("no GPU %d: the driver sees %d", cfg.Ordinal, n)
	}
	if err := d.drv.check("cuDeviceGet", d.drv.cuDeviceGet(&dev, int32(cfg.Ordinal))); err != nil {
		return err
	}
	name := make([]byte, 256)
	err := d.drv.check("cuDeviceGetName", d.drv.cuDeviceGetName(&name[0], int32(len(name)), dev))
	if err == nil {
		err = d.drv.check("cuDeviceGetAttribute", d.drv.cuDeviceGetAttribute(&major, attrCapabilityMajor, dev))
	}
	if err == nil {
		err = d.drv.check("cuDeviceGetAttribute", d.drv.cuDeviceGetAttribute(&minor, attrCapabilityMinor, dev))
	}
	if err != nil {
		return err
	}
	d.name = fmt.Sprintf("GPU %d (%s, compute capability %d.%d)", cfg.Ordinal, string(bytes.TrimRight(name, "\x00")), major, minor)
	if err := checkCapability(d.name, int(10*major+minor), cfg.MinCapability); err != nil {
		return err
	}
	if err := d.drv.check("cuDevicePrimaryCtxRetain", d.drv.cuPrimaryCtxRetain(&d.ctx, dev)); err != nil {
		return err
	}
	d.dev = dev
	return d.drv.check("cuCtxSetCurrent", d.drv.cuCtxSetCurrent(d.ctx))
}

// checkCapability says why a GPU of compute capability cc (10·major + minor)
// cannot run kernels that need least.
func checkCapability(name string, cc, least int) error {
	if cc < least {
		return errors.Errorf("%s is not usable: the kernels need compute capability %d.%d or later", name, least/10, least%10)
	}
	return nil
}

// load makes the device's stream, pinned memory, cuBLAS's handle on the
// stream with its workspace, and loads every registered device module, so
// that a missing kernel is an error here.
func (d *CUDA) load() error {
	if err := d.drv.check("cuStreamCreate", d.drv.cuStreamCreate(&d.stream, streamNonBlocking)); err != nil {
		return err
	}
	for _, b := range []struct {
		p    *unsafe.Pointer
		size int
	}{{&d.args, 2 * 8 * graph.MaxLaunchArgs}, {&d.stage.p, stagingBytes}} {
		if err := d.drv.check("cuMemHostAlloc", d.drv.cuMemHostAlloc(b.p, uintptr(b.size), 0)); err != nil {
			return err
		}
	}
	d.stage.size = stagingBytes
	for i := range graph.MaxLaunchArgs {
		*(*uintptr)(unsafe.Add(d.args, 8*(graph.MaxLaunchArgs+i))) = uintptr(unsafe.Add(d.args, 8*i))
	}
	if err := d.drv.check("cuMemAlloc", d.drv.cuMemAlloc(&d.workspace, workspaceBytes)); err != nil {
		return errors.Wrap(err, "cuBLAS's workspace")
	}
	if err := d.blas.check("cublasCreate_v2", d.blas.create(&d.handle)); err != nil {
		return err
	}
	if err := d.blas.check("cublasSetMathMode", d.blas.setMathMode(d.handle, cublasDefaultMath)); err != nil {
		return err
	}
	if err := d.blas.check("cublasSetStream_v2", d.blas.setStream(d.handle, d.stream)); err != nil {
		return err
	}
	if err := d.blas.check("cublasSetWorkspace_v2", d.blas.setWorkspace(d.handle, d.workspace, workspaceBytes)); err != nil {
		return err
	}
	for _, m := range graph.DeviceModules() {
		if err := d.loadModule(m); err != nil {
			return err
		}
	}
	return nil
}

// loadModule loads the PTX of every file of m, and its kernels' functions.
func (d *CUDA) loadModule(m *graph.DeviceModule) error {
	for len(d.mods) <= m.Index() {
		d.mods, d.funcs = append(d.mods, nil), append(d.funcs, nil)
	}
	byFile := map[string]uintptr{}
	for _, f := range m.Files() {
		ptx, err := fs.ReadFile(m.FS(), m.PTXName(f))
		if err != nil {
			return errors.Wrapf(err, "device module %s", m.Name())
		}
		var mod uintptr
		img := append(ptx, 0)
		if err := d.drv.check("cuModuleLoadData("+m.Name()+"/"+f+")", d.drv.cuModuleLoadData(&mod, &img[0])); err != nil {
			return err
		}
		d.mods[m.Index()] = append(d.mods[m.Index()], mod)
		byFile[f] = mod
	}
	ks := m.Kernels()
	funcs := make([]uintptr, len(ks))
	for i, k := range ks {
		if err := d.drv.check("cuModuleGetFunction("+k.String()+")", d.drv.cuModuleGetFunction(&funcs[i], byFile[k.File()], k.Name())); err != nil {
			return err
		}
	}
	d.funcs[m.Index()] = funcs
	return nil
}

// function is k's function, its module loaded if it was registered after
// the device was opened (the caller holds mu).
func (d *CUDA) function(k *graph.DeviceKernel) (uintptr, error) {
	m := k.Module()
	if m.Index() >= len(d.funcs) || d.funcs[m.Index()] == nil {
		if err := d.loadModule(m); err != nil {
			return 0, err
		}
	}
	return d.funcs[m.Index()][k.Index()], nil
}

// release frees what open made, in reverse; it returns what failed, or "".
func (d *CUDA) release() string {
	var errs []string
	note := func(err error) {
		if err != nil {
			errs = append(errs, err.Error())
		}
	}
	if d.handle != 0 {
		note(d.blas.check("cublasDestroy_v2", d.blas.destroy(d.handle)))
	}
	for _, mods := range d.mods {
		for _, m := range mods {
			note(d.drv.check("cuModuleUnload", d.drv.cuModuleUnload(m)))
		}
	}
	for _, p := range d.allocs.bases() {
		note(d.drv.check("cuMemFree", d.drv.cuMemFree(p)))
	}
	if d.workspace != 0 {
		note(d.drv.check("cuMemFree", d.drv.cuMemFree(d.workspace)))
	}
	for _, p := range []unsafe.Pointer{d.args, d.stage.p} {
		if p != nil {
			note(d.drv.check("cuMemFreeHost", d.drv.cuMemFreeHost(p)))
		}
	}
	if d.stream != 0 {
		note(d.drv.check("cuStreamDestroy", d.drv.cuStreamDestroy(d.stream)))
	}
	if d.dev >= 0 {
		note(d.drv.check("cuDevicePrimaryCtxRelease", d.drv.cuPrimaryCtxRelease(d.dev)))
	}
	d.handle, d.mods, d.funcs, d.allocs, d.dev = 0, nil, nil, newAllocs(), -1
	d.workspace, d.args, d.stage.p, d.stream = 0, nil, nil, 0
	if len(errs) == 0 {
		return ""
	}
	return "(also, cleaning up: " + strings.Join(errs, "; ") + ")"
}

// do runs f with the lock held and the context current on this thread
// (the context is a thread's, and goroutines move between threads).
func (d *CUDA) do(f func() error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dev < 0 {
		return errors.New("cuda: device closed")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := d.drv.check("cuCtxSetCurrent", d.drv.cuCtxSetCurrent(d.ctx)); err != nil {
		return errors.Wrap(err, "cuda")
	}
	return errors.Wrap(f(), "cuda")
}

// Name implements graph.Backend.
func (d *CUDA) Name() string { return "cuda " + d.name }

// Alloc implements graph.Backend: n bytes rounded up to whole granules.
func (d *CUDA) Alloc(n int) (graph.DevicePtr, error) {
	var p graph.DevicePtr
	err := d.do(func() error {
		if n <= 0 {
			return errors.Errorf("alloc: %d bytes", n)
		}
		if err := d.drv.check("cuMemAlloc", d.drv.cuMemAlloc(&p, uintptr(rounded(n)))); err != nil {
			return errors.Wrapf(err, "allocating %d bytes on %s", n, d.name)
		}
		return d.allocs.add(p, n)
	})
	return p, err
}

// Free implements graph.Backend.
func (d *CUDA) Free(p graph.DevicePtr) error {
	return d.do(func() error {
		if err := d.allocs.remove(p); err != nil {
			return err
		}
		return d.drv.check("cuMemFree", d.drv.cuMemFree(p))
	})
}

// ToDevice implements graph.Backend: src goes through the pinned ring, in
// pieces of at most its size.
func (d *CUDA) ToDevice(dst graph.DevicePtr, src []byte) error {
	return d.do(func() error {
		if err := d.checkCopy("to device", dst, len(src)); err != nil {
			return err
		}
		for len(src) > 0 {
			n := min(len(src), d.stage.size)
			if d.stage.head+n > d.stage.size {
				if err := d.drv.check("cuStreamSynchronize", d.drv.cuStreamSynchronize(d.stream)); err != nil {
					return err
				}
				d.stage.head = 0
			}
			at := unsafe.Add(d.stage.p, d.stage.head)
			copy(unsafe.Slice((*byte)(at), n), src[:n])
			if err := d.drv.check("cuMemcpyHtoDAsync", d.drv.cuMemcpyHtoDAsync(dst, at, uintptr(n), d.stream)); err != nil {
				return err
			}
			d.stage.head += (n + 255) &^ 255
			dst, src = dst.Add(n), src[n:]
		}
		return nil
	})
}

// ToHost implements graph.Backend.
func (d *CUDA) ToHost(dst []byte, src graph.DevicePtr) error {
	return d.do(func() error {
		if err := d.checkCopy("to host", src, len(dst)); err != nil || len(dst) == 0 {
			return err
		}
		if err := d.drv.check("cuMemcpyDtoHAsync", d.drv.cuMemcpyDtoHAsync(unsafe.Pointer(&dst[0]), src, uintptr(len(dst)), d.stream)); err != nil {
			return err
		}
		return d.drv.check("cuStreamSynchronize", d.drv.cuStreamSynchronize(d.stream))
	})
}

// Launch implements graph.Backend.
func (d *CUDA) Launch(l *graph.Launch) error {
	return d.do(func() error {
		if err := d.checkLaunch(l); err != nil {
			return err
		}
		f, err := d.function(l.Kernel)
		if err != nil {
			return err
		}
		for i, a := range l.Args() {
			*(*uint64)(unsafe.Add(d.args, 8*i)) = a
		}
		g, b := l.Grid.Dims(), l.Block.Dims()
		r := d.drv.cuLaunchKernel(f, g[0], g[1], g[2], b[0], b[1], b[2], 0, d.stream, unsafe.Add(d.args, 8*graph.MaxLaunchArgs), nil)
		return d.drv.check("cuLaunchKernel", r)
	})
}

// Gemm implements graph.Backend.
func (d *CUDA) Gemm(g *graph.DeviceGEMM) error {
	return d.do(func() error {
		if err := d.checkGemm(g); err != nil {
			return err
		}
		return d.blas.gemm(d.handle, g)
	})
}

// Sync implements graph.Backend.
func (d *CUDA) Sync() error {
	return d.do(func() error { return d.drv.check("cuStreamSynchronize", d.drv.cuStreamSynchronize(d.stream)) })
}

// Record implements graph.Backend: the work is captured from the stream
// (relaxed mode), not run, and instantiated as a CUDA graph, which Run
// launches.
func (d *CUDA) Record(work func() error) (graph.Replay, error) {
	err := d.do(func() error {
		return d.drv.check("cuStreamBeginCapture", d.drv.cuStreamBeginCapture(d.stream, captureModeRelaxed))
	})
	if err != nil {
		return nil, err
	}
	werr := work()
	var g uintptr
	err = d.do(func() error { return d.drv.check("cuStreamEndCapture", d.drv.cuStreamEndCapture(d.stream, &g)) })
	if werr != nil && g != 0 {
		_ = d.do(func() error { return d.drv.check("cuGraphDestroy", d.drv.cuGraphDestroy(g)) }) // the work's error is what matters
	}
	switch {
	case werr != nil:
		return nil, errors.Wrap(werr, "recording")
	case err != nil:
		return nil, err
	}
	r := &cudaGraph{d: d}
	err = d.do(func() error {
		ierr := d.drv.check("cuGraphInstantiateWithFlags", d.drv.cuGraphInstantiate(&r.exec, g, 0))
		derr := d.drv.check("cuGraphDestroy", d.drv.cuGraphDestroy(g))
		if ierr != nil {
			return ierr
		}
		return derr
	})
	return r, err
}

// cudaGraph is a recording of a CUDA's work, instantiated.
type cudaGraph struct {
	d    *CUDA
	exec uintptr
}

// Run implements graph.Replay.
func (r *cudaGraph) Run() error {
	return r.d.do(func() error { return r.d.drv.check("cuGraphLaunch", r.d.drv.cuGraphLaunch(r.exec, r.d.stream)) })
}

// Close implements graph.Replay.
func (r *cudaGraph) Close() error {
	if r.exec == 0 {
		return nil
	}
	err := r.d.do(func() error { return r.d.drv.check("cuGraphExecDestroy", r.d.drv.cuGraphExecDestroy(r.exec)) })
	r.exec = 0
	return err
}

// Close implements graph.Backend.
func (d *CUDA) Close() error {
	return d.do(func() error {
		if msg := d.release(); msg != "" {
			return errors.New(msg)
		}
		return nil
	})
}
