package cuda

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"unsafe"

	"github.com/pkg/errors"
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
// run time; it implements Device.
type CUDA struct {
	*core
	drv    *driver
	blas   *cublas
	dev    int32
	name   string
	ctx    uintptr
	mods   []uintptr
	funcs  map[string]uintptr
	handle uintptr
}

// Open opens the GPU with DefaultConfig.
func Open() (*CUDA, error) { return OpenConfig(DefaultConfig()) }

// OpenConfig loads the libraries, checks the driver's version, finds the
// GPU, checks its compute capability, and loads every kernel and cuBLAS,
// so that a program fails here, before any work, if anything is missing.
// Its errors name what is missing; errors.Cause of an error from the driver
// is a *DriverError (NoDevice: no GPU).
func OpenConfig(cfg Config) (*CUDA, error) {
	c, err := newCore()
	if err != nil {
		return nil, err
	}
	d := &CUDA{core: c, funcs: map[string]uintptr{}, dev: -1}
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

// load loads every kernel's module and function, and creates cuBLAS's handle.
func (d *CUDA) load() error {
	_, files, err := kernels()
	if err != nil {
		return err
	}
	for _, f := range files {
		ptx, err := source.ReadFile("kernels/" + strings.TrimSuffix(f, ".cu") + ".ptx")
		if err != nil {
			return errors.Wrap(err, "kernels")
		}
		var m uintptr
		img := append(ptx, 0)
		if err := d.drv.check("cuModuleLoadData("+f+")", d.drv.cuModuleLoadData(&m, &img[0])); err != nil {
			return err
		}
		d.mods = append(d.mods, m)
		local, err := parseKernels(f, string(cuSource(f)))
		if err != nil {
			return err
		}
		for name := range local {
			var fn uintptr
			if err := d.drv.check("cuModuleGetFunction("+name+")", d.drv.cuModuleGetFunction(&fn, m, name)); err != nil {
				return err
			}
			d.funcs[name] = fn
		}
	}
	if err := d.blas.check("cublasCreate_v2", d.blas.create(&d.handle)); err != nil {
		return err
	}
	return d.blas.check("cublasSetMathMode", d.blas.setMathMode(d.handle, cublasDefaultMath))
}

// cuSource is the CUDA source of the .cu file f (embedded, so never missing).
func cuSource(f string) []byte {
	b, _ := source.ReadFile("kernels/" + f)
	return b
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
	for _, m := range d.mods {
		note(d.drv.check("cuModuleUnload", d.drv.cuModuleUnload(m)))
	}
	for p := range d.allocs {
		note(d.drv.check("cuMemFree", d.drv.cuMemFree(p)))
	}
	if d.dev >= 0 {
		note(d.drv.check("cuDevicePrimaryCtxRelease", d.drv.cuPrimaryCtxRelease(d.dev)))
	}
	d.handle, d.mods, d.allocs, d.dev = 0, nil, allocs{}, -1
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

// Name implements Device.
func (d *CUDA) Name() string { return "cuda " + d.name }

// Alloc implements Device.
func (d *CUDA) Alloc(n int) (Ptr, error) {
	var p Ptr
	err := d.do(func() error {
		if n <= 0 {
			return errors.Errorf("alloc: %d bytes", n)
		}
		if err := d.drv.check("cuMemAlloc", d.drv.cuMemAlloc(&p, uintptr(n))); err != nil {
			return errors.Wrapf(err, "allocating %d bytes on %s", n, d.name)
		}
		d.allocs[p] = n
		return nil
	})
	return p, err
}

// Free implements Device.
func (d *CUDA) Free(p Ptr) error {
	return d.do(func() error {
		if err := d.freeCheck(p); err != nil {
			return err
		}
		return d.drv.check("cuMemFree", d.drv.cuMemFree(p))
	})
}

// ToDevice implements Device.
func (d *CUDA) ToDevice(dst Ptr, src []byte) error {
	return d.do(func() error {
		if err := d.copyCheck("to device", dst, len(src)); err != nil || len(src) == 0 {
			return err
		}
		return d.drv.check("cuMemcpyHtoD", d.drv.cuMemcpyHtoD(dst, unsafe.Pointer(&src[0]), uintptr(len(src))))
	})
}

// ToHost implements Device.
func (d *CUDA) ToHost(dst []byte, src Ptr) error {
	return d.do(func() error {
		if err := d.copyCheck("to host", src, len(dst)); err != nil || len(dst) == 0 {
			return err
		}
		return d.drv.check("cuMemcpyDtoH", d.drv.cuMemcpyDtoH(unsafe.Pointer(&dst[0]), src, uintptr(len(dst))))
	})
}

// Launch implements Device.
func (d *CUDA) Launch(kernel string, grid, block Dim3, in ...any) error {
	return d.do(func() error {
		g, b, a, err := d.launchArgs(kernel, grid, block, in)
		if err != nil {
			return err
		}
		defer a.pinner.Unpin()
		r := d.drv.cuLaunchKernel(d.funcs[kernel], g[0], g[1], g[2], b[0], b[1], b[2], 0, 0, a.list(), nil)
		return d.drv.check("cuLaunchKernel("+kernel+")", r)
	})
}

// Gemm implements Device.
func (d *CUDA) Gemm(g GEMM) error {
	return d.do(func() error {
		if err := g.check(d.allocs); err != nil {
			return err
		}
		return d.blas.gemm(d.handle, g)
	})
}

// Sync implements Device.
func (d *CUDA) Sync() error {
	return d.do(func() error { return d.drv.check("cuCtxSynchronize", d.drv.cuCtxSynchronize()) })
}

// Close implements Device.
func (d *CUDA) Close() error {
	return d.do(func() error {
		if msg := d.release(); msg != "" {
			return errors.New(msg)
		}
		return nil
	})
}
