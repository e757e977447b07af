package cuda

import (
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"unsafe"

	"github.com/pkg/errors"
	"github.com/transformer-go/transformer/internal/atomicfile"
)

// Sim is the simulated device: the kernels' own CUDA source built for the
// host with g++ and the shim kernels/sim.h, loaded like the CUDA libraries.
// Its memory is host memory (new allocations are filled with NaN bytes, so
// that reading memory never written shows); its products are plain loops
// in float32. It implements Device, and checks kernels without a GPU.
type Sim struct {
	*core
	lib    *library
	launch func(name string, gx, gy, gz, bx, by, bz uint32, args unsafe.Pointer) int32
	alloc  func(n uintptr) Ptr
	free   func(p Ptr)
	toDev  func(dst Ptr, src unsafe.Pointer, n uintptr)
	toHost func(dst unsafe.Pointer, src Ptr, n uintptr)
	gemm   func(ta, tb, m, n, k int32, alpha float32, a Ptr, lda int32, b Ptr, ldb int32, beta float32, c Ptr, ldc, bf16, batch int32, sa, sb, sc int64)
}

// OpenSim builds the simulated device in dir (which must exist; a test's
// t.TempDir) with the g++ on PATH (C++20), and loads it.
func OpenSim(dir string) (*Sim, error) {
	c, err := newCore()
	if err != nil {
		return nil, err
	}
	so, err := buildSim(dir, c.sigs)
	if err != nil {
		return nil, errors.Wrap(err, "simulated device")
	}
	lib, err := openLibrary("the simulated device", []string{so})
	if err != nil {
		return nil, err
	}
	s := &Sim{core: c, lib: lib}
	err = lib.bind(map[string]any{
		"sim_launch": &s.launch, "sim_alloc": &s.alloc, "sim_free": &s.free,
		"sim_copy": &s.toDev, "sim_gemm": &s.gemm,
	})
	if err == nil {
		err = lib.bind(map[string]any{"sim_copy": &s.toHost})
	}
	if err != nil {
		_ = lib.close() // the error above says what matters
		return nil, errors.Wrap(err, "simulated device")
	}
	return s, nil
}

// buildSim writes the kernels' source, the shim and a file that includes
// them with the table of kernels into dir, and compiles them to sim.so.
func buildSim(dir string, sigs map[string][]param) (string, error) {
	files, err := source.ReadDir("kernels")
	if err != nil {
		return "", err
	}
	var main strings.Builder
	main.WriteString("#include \"sim.h\"\n")
	shared := map[string]bool{}
	for _, f := range files {
		b, err := source.ReadFile("kernels/" + f.Name())
		if err == nil {
			err = atomicfile.WriteBytes(filepath.Join(dir, f.Name()), b)
		}
		if err != nil {
			return "", err
		}
		if filepath.Ext(f.Name()) == ".cu" {
			fmt.Fprintf(&main, "#include %q\n", f.Name())
			maps.Copy(shared, sharedKernels(string(b)))
		}
	}
	names := make([]string, 0, len(sigs))
	for n := range sigs {
		names = append(names, n)
	}
	sort.Strings(names)
	main.WriteString("static const sim::Kernel sim_kernels[] = {\n")
	for _, n := range names {
		fmt.Fprintf(&main, "SIM_KERNEL(%s, %t)\n", n, shared[n])
	}
	main.WriteString("};\nSIM_EXPORTS\n")
	src, so := filepath.Join(dir, "sim.cpp"), filepath.Join(dir, "sim.so")
	if err := atomicfile.WriteBytes(src, []byte(main.String())); err != nil {
		return "", err
	}
	cmd := exec.Command("g++", "-std=c++20", "-O2", "-shared", "-fPIC", "-pthread", "-Wall", "-Werror", "-Wno-unused-function", "-o", so, src)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", errors.Wrapf(err, "g++ %s: %s", src, out)
	}
	return so, nil
}

// Name implements Device.
func (s *Sim) Name() string { return "simulated (CUDA source on the host)" }

// Alloc implements Device.
func (s *Sim) Alloc(n int) (Ptr, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n <= 0 {
		return 0, errors.Errorf("sim: alloc: %d bytes", n)
	}
	p := s.alloc(uintptr(n))
	if p == 0 {
		return 0, errors.Errorf("sim: out of memory allocating %d bytes", n)
	}
	s.allocs[p] = n
	return p, nil
}

// Free implements Device.
func (s *Sim) Free(p Ptr) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.freeCheck(p); err != nil {
		return errors.Wrap(err, "sim")
	}
	s.free(p)
	return nil
}

// ToDevice implements Device.
func (s *Sim) ToDevice(dst Ptr, src []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.copyCheck("sim: to device", dst, len(src)); err != nil || len(src) == 0 {
		return err
	}
	s.toDev(dst, unsafe.Pointer(&src[0]), uintptr(len(src)))
	return nil
}

// ToHost implements Device.
func (s *Sim) ToHost(dst []byte, src Ptr) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.copyCheck("sim: to host", src, len(dst)); err != nil || len(dst) == 0 {
		return err
	}
	s.toHost(unsafe.Pointer(&dst[0]), src, uintptr(len(dst)))
	return nil
}

// Launch implements Device.
func (s *Sim) Launch(kernel string, grid, block Dim3, in ...any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, b, a, err := s.launchArgs(kernel, grid, block, in)
	if err != nil {
		return errors.Wrap(err, "sim")
	}
	defer a.pinner.Unpin()
	switch s.launch(kernel, g[0], g[1], g[2], b[0], b[1], b[2], a.list()) {
	case 0:
		return nil
	case 1:
		return errors.Errorf("sim: kernel %s is not in the simulated device", kernel)
	case 3:
		return errors.Errorf("sim: kernel %s calls __syncthreads but declares no __shared__ memory", kernel)
	}
	return errors.Errorf("sim: kernel %s: cannot start %d threads", kernel, b[0]*b[1]*b[2])
}

// Gemm implements Device.
func (s *Sim) Gemm(g GEMM) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := g.check(s.allocs); err != nil {
		return errors.Wrap(err, "sim")
	}
	s.gemm(b2i(g.TransA), b2i(g.TransB), int32(g.M), int32(g.N), int32(g.K), g.Alpha, g.A, int32(g.LDA), g.B, int32(g.LDB),
		g.Beta, g.C, int32(g.LDC), b2i(g.BF16), int32(g.Batch), int64(g.StrideA), int64(g.StrideB), int64(g.StrideC))
	return nil
}

// b2i is 1 for true, 0 for false.
func b2i(b bool) int32 {
	if b {
		return 1
	}
	return 0
}

// Sync implements Device; the simulated device's work ends before its call
// returns.
func (s *Sim) Sync() error { return nil }

// Close implements Device.
func (s *Sim) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for p := range s.allocs {
		s.free(p)
	}
	s.allocs = allocs{}
	return s.lib.close()
}
