package graph

import (
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/pkg/errors"
)

// DeviceModule is the device kernels that a package ships with its ops: CUDA
// C source files (NAME.cu, with any .cuh they include beside them) and for
// each the PTX that nvcc makes of it (NAME.ptx, committed), so that a device
// backend loads them without a compiler and a simulated device builds the
// same source for the host. An op's device kernels launch its kernels by
// handle (Kernel). graph registers its own module, "graph", the same way a
// package of ops registers its own (layers/ops does).
type DeviceModule struct {
	name    string
	index   int
	fsys    fs.FS
	files   []string
	kernels map[string]*DeviceKernel
	list    []*DeviceKernel
}

// DeviceKernel is one kernel of a DeviceModule: its name and its parameters,
// as its source declares them, and whether its body declares __shared__
// memory. Launches name it by this handle, which a backend resolves in
// constant time.
type DeviceKernel struct {
	module *DeviceModule
	name   string
	file   string
	index  int
	params []KernelParam
	shared bool
}

// KernelParam is one parameter of a kernel: its name and the kind of value it
// takes.
type KernelParam struct {
	Name string
	Kind ParamKind
}

// ParamKind is the C type of a kernel parameter, as a launch passes it.
type ParamKind uint8

const (
	// ParamPtr is a pointer: DevicePtr (Launch.Ptr).
	ParamPtr ParamKind = iota + 1
	// ParamInt is a C int: an int that fits 32 bits (Launch.Int).
	ParamInt
	// ParamFloat is a C float: float32 (Launch.F32).
	ParamFloat
	// ParamU64 is an unsigned long long: uint64 (Launch.U64).
	ParamU64
)

// String names the kind as a kernel's source writes it.
func (k ParamKind) String() string {
	switch k {
	case ParamPtr:
		return "pointer (DevicePtr)"
	case ParamInt:
		return "int (int)"
	case ParamFloat:
		return "float (float32)"
	case ParamU64:
		return "unsigned long long (uint64)"
	}
	return "no argument"
}

// modules are the registered device modules, in the order of registration.
var modules struct {
	sync.Mutex
	list []*DeviceModule
}

// RegisterDeviceModule registers the device kernels in the folder dir of
// fsys (NAME.cu and NAME.ptx files, and .cuh headers; an embed.FS, say)
// under name, usually the registering package's import path, and returns
// the module, from which ops take their kernels' handles. Every kernel is declared
//
//	extern "C" __global__ void name(params)
//
// with parameters that are pointers, int, float or unsigned long long, at
// most MaxLaunchArgs of them; kernel names are unique within the module. Sources may include "common.cuh", the
// launch shapes and reductions every backend provides (graph/cuda's
// include/common.cuh). A package registers its module once, at
// initialization; registering a name twice is an error.
func RegisterDeviceModule(name string, fsys fs.FS, dir string) (*DeviceModule, error) {
	sub, err := fs.Sub(fsys, dir)
	if err != nil {
		return nil, errors.Wrapf(err, "device module %s", name)
	}
	m, err := newDeviceModule(name, sub)
	if err != nil {
		return nil, errors.Wrapf(err, "device module %s", name)
	}
	modules.Lock()
	defer modules.Unlock()
	for _, o := range modules.list {
		if o.name == name {
			return nil, errors.Errorf("device module %s is registered already", name)
		}
	}
	m.index = len(modules.list)
	modules.list = append(modules.list, m)
	return m, nil
}

// MustRegisterDeviceModule is RegisterDeviceModule for a package's
// initialization: it panics on an error, which is the package's own source
// being malformed.
func MustRegisterDeviceModule(name string, fsys fs.FS, dir string) *DeviceModule {
	m, err := RegisterDeviceModule(name, fsys, dir)
	if err != nil {
		panic(err)
	}
	return m
}

// DeviceModules lists the registered modules in the order of registration.
func DeviceModules() []*DeviceModule {
	modules.Lock()
	defer modules.Unlock()
	return slices.Clone(modules.list)
}

// newDeviceModule reads and checks the module's source.
func newDeviceModule(name string, fsys fs.FS) (*DeviceModule, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, err
	}
	m := &DeviceModule{name: name, fsys: fsys, kernels: map[string]*DeviceKernel{}}
	for _, e := range entries {
		if path.Ext(e.Name()) != ".cu" {
			continue
		}
		m.files = append(m.files, e.Name())
		if err := m.parse(e.Name()); err != nil {
			return nil, err
		}
	}
	if len(m.files) == 0 {
		return nil, errors.New("no .cu files")
	}
	return m, nil
}

// parse adds the kernels of the source file f, checking that its PTX is there.
func (m *DeviceModule) parse(f string) error {
	if _, err := fs.Stat(m.fsys, m.PTXName(f)); err != nil {
		return errors.Wrapf(err, "%s has no PTX (run the module's go generate)", f)
	}
	src, err := fs.ReadFile(m.fsys, f)
	if err != nil {
		return err
	}
	decls, err := parseKernels(f, string(src))
	if err != nil {
		return err
	}
	for _, d := range decls {
		if _, dup := m.kernels[d.name]; dup {
			return errors.Errorf("%s: kernel %s is declared in another file too", f, d.name)
		}
		d.module, d.file, d.index = m, f, len(m.list)
		m.kernels[d.name] = d
		m.list = append(m.list, d)
	}
	return nil
}

// Name is the name the module was registered under.
func (m *DeviceModule) Name() string { return m.name }

// Index is the module's place in DeviceModules: a backend's table of
// modules is indexed by it.
func (m *DeviceModule) Index() int { return m.index }

// Files are the module's source files (NAME.cu), sorted.
func (m *DeviceModule) Files() []string { return slices.Clone(m.files) }

// FS is the module's files: sources, headers and PTX.
func (m *DeviceModule) FS() fs.FS { return m.fsys }

// PTXName is the name of the PTX of the source file f.
func (m *DeviceModule) PTXName(f string) string { return strings.TrimSuffix(f, ".cu") + ".ptx" }

// Kernels are the module's kernels, in the order of their files and
// declarations; a kernel's Index is its place here.
func (m *DeviceModule) Kernels() []*DeviceKernel { return slices.Clone(m.list) }

// Kernel is the handle of the module's kernel name. An op's package takes its
// handles once, at initialization, so a name its source does not declare
// panics there, as regexp.MustCompile does on a malformed expression.
func (m *DeviceModule) Kernel(name string) *DeviceKernel {
	k, ok := m.kernels[name]
	if !ok {
		panic("device module " + m.name + " declares no kernel " + name)
	}
	return k
}

// Name is the kernel's name in its source.
func (k *DeviceKernel) Name() string { return k.name }

// Module is the module that declares the kernel.
func (k *DeviceKernel) Module() *DeviceModule { return k.module }

// File is the module's source file that declares the kernel.
func (k *DeviceKernel) File() string { return k.file }

// Index is the kernel's place in its module's Kernels.
func (k *DeviceKernel) Index() int { return k.index }

// Params are the kernel's parameters, in order.
func (k *DeviceKernel) Params() []KernelParam { return slices.Clone(k.params) }

// SharedMemory reports whether the kernel's body declares __shared__
// memory: a simulated device runs such a kernel with a thread per CUDA
// thread and a barrier for __syncthreads, the others as plain loops.
func (k *DeviceKernel) SharedMemory() bool { return k.shared }

// String is "module.kernel".
func (k *DeviceKernel) String() string { return k.module.name + "." + k.name }

// kernelDecl matches a kernel's declaration up to its parameter list.
var kernelDecl = regexp.MustCompile(`extern "C" __global__ void (\w+)\(([^)]*)\)`)

// parseKernels returns the kernels that the CUDA C source src of file
// declares, each with its parameters and whether its body declares
// __shared__ memory; a kernel is declared
// `extern "C" __global__ void name(params)` with one to MaxLaunchArgs
// parameters, each a pointer, int, float or unsigned long long.
func parseKernels(file, src string) ([]*DeviceKernel, error) {
	var out []*DeviceKernel
	seen := map[string]bool{}
	for _, m := range kernelDecl.FindAllStringSubmatchIndex(src, -1) {
		name, params := src[m[2]:m[3]], src[m[4]:m[5]]
		if seen[name] {
			return nil, errors.Errorf("%s: kernel %s declared twice", file, name)
		}
		seen[name] = true
		k := &DeviceKernel{name: name, shared: strings.Contains(kernelBody(src[m[1]:]), "__shared__")}
		for _, p := range strings.Split(params, ",") {
			q, err := parseParam(p)
			if err != nil {
				return nil, errors.Wrapf(err, "%s: kernel %s", file, name)
			}
			k.params = append(k.params, q)
		}
		if len(k.params) > MaxLaunchArgs {
			return nil, errors.Errorf("%s: kernel %s takes %d parameters, more than the %d a launch passes", file, name, len(k.params), MaxLaunchArgs)
		}
		out = append(out, k)
	}
	return out, nil
}

// kernelBody is the body of the kernel whose declaration src follows: src
// up to the brace that closes the first one opened (all of src if none
// does).
func kernelBody(src string) string {
	depth := 0
	for i, c := range src {
		if c == '{' {
			depth++
		} else if c == '}' {
			if depth--; depth == 0 {
				return src[:i]
			}
		}
	}
	return src
}

// parseParam parses one parameter such as "const float* x" or "int n".
func parseParam(p string) (KernelParam, error) {
	f := strings.Fields(strings.ReplaceAll(p, "*", " * "))
	if len(f) < 2 {
		return KernelParam{}, errors.Errorf("parameter %q has no type and name", strings.TrimSpace(p))
	}
	name, typ := f[len(f)-1], strings.Join(f[:len(f)-1], " ")
	switch {
	case strings.HasSuffix(typ, "*"):
		return KernelParam{name, ParamPtr}, nil
	case typ == "int":
		return KernelParam{name, ParamInt}, nil
	case typ == "float":
		return KernelParam{name, ParamFloat}, nil
	case typ == "unsigned long long":
		return KernelParam{name, ParamU64}, nil
	}
	return KernelParam{}, errors.Errorf("parameter %q: type %q is not a pointer, int, float or unsigned long long", name, typ)
}
