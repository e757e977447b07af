package cuda

import (
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"
	"unsafe"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/graph"
	_ "github.com/transformer-go/transformer/layers/ops" // registers its device module
)

// needTool skips the test, saying how to install tool, when it is not on
// PATH; under CI=true it fails instead.
func needTool(t *testing.T, tool, install string) string {
	t.Helper()
	p, err := exec.LookPath(tool)
	if err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s not found with CI=true; install: %s", tool, install)
	}
	t.Skipf("%s not found; install: %s", tool, install)
	return ""
}

// toolkitHint says how to install the CUDA toolkit (nvcc, ptxas, libcuda).
const toolkitHint = "add `contrib non-free` to Components: in /etc/apt/sources.list.d/debian.sources, " +
	"apt-get update && apt-get install --no-install-recommends nvidia-cuda-toolkit (see .ci/run)"

// needDriverLib skips (fails under CI=true) when libcuda.so.1 cannot be loaded.
func needDriverLib(t *testing.T) {
	t.Helper()
	if _, err := openLibrary("libcuda", DefaultConfig().DriverLibs); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("with CI=true: %v; install: %s", err, toolkitHint)
		}
		t.Skipf("%v; install: %s", err, toolkitHint)
	}
}

// Ptr, GEMM and Dim3 are graph's, as the tests write them.
type (
	Ptr  = graph.DevicePtr
	GEMM = graph.DeviceGEMM
	Dim3 = graph.Dim3
)

// testDevice is a device under test with its tolerance, relative; its
// Launch takes a kernel's name and arguments of any of the kinds a launch
// passes, and its Gemm a GEMM by value.
type testDevice struct {
	graph.Backend
	tol float64
}

// Launch launches the kernel name of the registered modules.
func (d testDevice) Launch(name string, grid, block Dim3, args ...any) error {
	k, err := kernelNamed(name)
	if err != nil {
		return err
	}
	return d.launch(k.Grid(grid, block), args)
}

// launch launches l with args.
func (d testDevice) launch(l graph.Launch, args []any) error {
	l, err := withArgs(l, args)
	if err != nil {
		return err
	}
	return d.Backend.Launch(&l)
}

// Gemm runs g.
func (d testDevice) Gemm(g GEMM) error { return d.Backend.Gemm(&g) }

// Elems launches the elementwise kernel name over n elements.
func Elems(d testDevice, name string, n int, args ...any) error {
	k, err := kernelNamed(name)
	if err != nil {
		return err
	}
	return d.launch(k.Elems(n), args)
}

// Rows launches the row kernel name over rows of cols.
func Rows(d testDevice, name string, rows, cols int, args ...any) error {
	k, err := kernelNamed(name)
	if err != nil {
		return err
	}
	return d.launch(k.Rows(rows, cols), args)
}

// kernelNamed is the kernel name of the registered modules (graph's and
// layers/ops's).
func kernelNamed(name string) (*graph.DeviceKernel, error) {
	for _, m := range graph.DeviceModules() {
		for _, k := range m.Kernels() {
			if k.Name() == name {
				return k, nil
			}
		}
	}
	return nil, errors.Errorf("no kernel %q", name)
}

// allKernels are the names of the project's modules' kernels (not the
// example's).
func allKernels() []string {
	var names []string
	for _, m := range graph.DeviceModules() {
		if strings.HasPrefix(m.Name(), "example.com/") {
			continue
		}
		for _, k := range m.Kernels() {
			names = append(names, k.Name())
		}
	}
	return names
}

// withArgs appends args to l by their Go types: Ptr, int or int32 (a C
// int), float32, uint64.
func withArgs(l graph.Launch, args []any) (graph.Launch, error) {
	for i, a := range args {
		switch v := a.(type) {
		case Ptr:
			l = l.Ptr(v)
		case int:
			l = l.Int(v)
		case int32:
			l = l.Int(int(v))
		case float32:
			l = l.F32(v)
		case uint64:
			l = l.U64(v)
		default:
			return l, errors.Errorf("argument %d: a %T", i+1, a)
		}
	}
	return l, nil
}

// Float32Bytes, Int32Bytes, Uint64Bytes and Uint16Bytes are x's memory as
// bytes, for copies.
func Float32Bytes(x []float32) []byte { return bytesOf(x) }
func Int32Bytes(x []int32) []byte     { return bytesOf(x) }
func Uint64Bytes(x []uint64) []byte   { return bytesOf(x) }
func Uint16Bytes(x []uint16) []byte   { return bytesOf(x) }

// bytesOf is x's memory.
func bytesOf[T any](x []T) []byte {
	if len(x) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(&x[0])), len(x)*int(unsafe.Sizeof(z)))
}

// devices returns the simulated device (1e-5) and, where a GPU is usable,
// the CUDA device (1e-4; float32 products without TF32); it skips when
// neither is.
func devices(t *testing.T) []testDevice {
	t.Helper()
	var ds []testDevice
	if _, err := exec.LookPath("g++"); err == nil || os.Getenv("CI") == "true" {
		needTool(t, "g++", "apt-get install g++")
		s, err := OpenSim(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		ds = append(ds, testDevice{s, 1e-5})
	} else {
		t.Log("no g++ (apt-get install g++): the simulated device is not tested")
	}
	if d, err := Open(); err == nil {
		t.Cleanup(func() { _ = d.Close() })
		ds = append(ds, testDevice{d, 1e-4})
	} else {
		t.Logf("no GPU, the CUDA device is not tested: %v", err)
	}
	if len(ds) == 0 {
		t.Skip("neither g++ for the simulated device nor a GPU")
	}
	return ds
}

// env runs kernels on one device for a test, failing it on any error, and
// records the kernels it launched.
type env struct {
	t    *testing.T
	d    testDevice
	seen map[string]bool
}

func (e *env) upload(x []float32) Ptr {
	e.t.Helper()
	p := e.alloc(len(x))
	if err := e.d.ToDevice(p, Float32Bytes(x)); err != nil {
		e.t.Fatal(err)
	}
	return p
}

func (e *env) uploadInts(x []int32) Ptr {
	e.t.Helper()
	p := e.alloc(len(x))
	if err := e.d.ToDevice(p, Int32Bytes(x)); err != nil {
		e.t.Fatal(err)
	}
	return p
}

// alloc allocates n 4-byte elements (at least one), freed at the test's end.
func (e *env) alloc(n int) Ptr {
	e.t.Helper()
	p, err := e.d.Alloc(4 * max(n, 1))
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = e.d.Free(p) })
	return p
}

func (e *env) download(p Ptr, n int) []float32 {
	e.t.Helper()
	x := make([]float32, n)
	if err := e.d.ToHost(Float32Bytes(x), p); err != nil {
		e.t.Fatal(err)
	}
	return x
}

// uploadWords copies 64-bit words (a table of tensors) to the device.
func (e *env) uploadWords(x []uint64) Ptr {
	e.t.Helper()
	p := e.alloc(2 * len(x))
	if err := e.d.ToDevice(p, Uint64Bytes(x)); err != nil {
		e.t.Fatal(err)
	}
	return p
}

// launchGrid launches kernel on a grid of more than one dimension.
func (e *env) launchGrid(kernel string, grid Dim3, block int, args ...any) {
	e.t.Helper()
	e.seen[kernel] = true
	if err := e.d.Launch(kernel, grid, Dim3{X: block}, args...); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) launch(kernel string, grid, block int, args ...any) {
	e.t.Helper()
	e.seen[kernel] = true
	if err := e.d.Launch(kernel, Dim3{X: grid}, Dim3{X: block}, args...); err != nil {
		e.t.Fatal(err)
	}
}

// near fails the test where got differs from want by more than tol
// relative: |got - want| ≤ tol·max(|want|, floor), floor 1% of the
// largest |want|. Elements near 0 are the difference of larger terms (a
// gradient's dy - Σ, Adam's β1·m + (1-β1)·g), which float32 rounds at the
// terms' scale, so they are held to the output's scale, not their own; a
// wrong formula is off by far more.
func near(t *testing.T, what string, got []float32, want []float64, tol float64) {
	t.Helper()
	nearTerms(t, what, got, want, nil, tol)
}

// nearTerms is near with the floor raised, element by element, to terms
// (if not nil): the size of the terms whose difference want[i] is, where
// float32's rounding of them is what limits the result.
func nearTerms(t *testing.T, what string, got []float32, want, terms []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	var top float64
	for _, w := range want {
		if !math.IsNaN(w) {
			top = max(top, math.Abs(w))
		}
	}
	bad := 0
	for i, g := range got {
		d, floor := math.Abs(float64(g)-want[i]), 1e-2*top
		if terms != nil {
			floor = max(floor, terms[i])
		}
		if !(d <= tol*max(math.Abs(want[i]), floor)) && !(math.IsNaN(want[i]) && math.IsNaN(float64(g))) {
			if bad++; bad <= 5 {
				t.Errorf("%s[%d] = %g, want %g (relative error %.2g, tolerance %g)", what, i, g, want[i], d/max(math.Abs(want[i]), floor), tol)
			}
		}
	}
	if bad > 5 {
		t.Errorf("%s: %d of %d values off", what, bad, len(got))
	}
}

// randn is n normal values times scale.
func randn(r *rand.Rand, n int, scale float64) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64() * scale)
	}
	return x
}

// f64 is x widened.
func f64(x []float32) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	return y
}

// checkGrad checks a reference gradient: grad must be the gradient at x of
// f, by central differences, to 1e-6 relative of grad's largest element.
func checkGrad(t *testing.T, what string, f func([]float64) float64, x, grad []float64) {
	t.Helper()
	var top float64
	for _, g := range grad {
		top = max(top, math.Abs(g))
	}
	for i := range x {
		h := 1e-6 * max(1, math.Abs(x[i]))
		keep := x[i]
		x[i] = keep + h
		fp := f(x)
		x[i] = keep - h
		fm := f(x)
		x[i] = keep
		if fd := (fp - fm) / (2 * h); math.Abs(fd-grad[i]) > 1e-6*max(top, 1) {
			t.Fatalf("%s reference: gradient[%d] = %g, finite differences %g", what, i, grad[i], fd)
		}
	}
}

// dot is Σ w·y, the scalar whose gradient checkGrad checks.
func dot(w, y []float64) float64 {
	var s float64
	for i := range w {
		s += w[i] * y[i]
	}
	return s
}

// contains fails the test unless err's message contains every one of want.
func contains(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one containing %q", want)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}
}
