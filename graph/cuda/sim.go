package cuda

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"unsafe"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/internal/atomicfile"
)

// shim are the host shim of the simulated device and the header every
// module's kernels include.
//
//go:embed sim.h include/common.cuh
var shim embed.FS

// Sim is the simulated device: each device module's own CUDA source built
// for the host with g++ and the shim sim.h into a library of its own,
// loaded like the CUDA libraries. Its memory is host memory (new
// allocations are filled with NaN bytes, so that reading memory never
// written shows); its products are plain loops in float32. It implements
// graph.Backend, and checks kernels and programs without a GPU.
type Sim struct {
	*core
	dir string
	// gxx is what g++ --version says, read once at open (not per library,
	// nor per process: it is the g++ on PATH when the device opened), which
	// names the libraries in the cache; nil where g++ cannot say it.
	gxx    []byte
	base   *library
	alloc  func(n uintptr) graph.DevicePtr
	free   func(p graph.DevicePtr)
	toDev  func(dst graph.DevicePtr, src unsafe.Pointer, n uintptr)
	toHost func(dst unsafe.Pointer, src graph.DevicePtr, n uintptr)
	gemm   func(ta, tb, m, n, k int32, alpha float32, a graph.DevicePtr, lda int32, b graph.DevicePtr, ldb int32, beta float32, c graph.DevicePtr, ldc, bf16, batch int32, sa, sb, sc int64)
	table  func(ta, tb, m, n, k int32, alpha float32, t graph.DevicePtr, lda, ldb int32, beta float32, ldc, bf16, count int32)
	// mods are the modules' libraries and launches, by module index.
	mods []*simModule
	// args holds a launch's argument slots and their addresses, in memory
	// of the simulated device's library (allocHost, freeHost).
	args      unsafe.Pointer
	allocHost func(n uintptr) unsafe.Pointer
	freeHost  func(p unsafe.Pointer)
}

// simModule is one module's kernels built for the host.
type simModule struct {
	lib    *library
	launch func(index int32, gx, gy, gz, bx, by, bz uint32, args unsafe.Pointer) int32
}

// OpenSim builds the simulated device in dir (which must exist; a test's
// t.TempDir) with the g++ on PATH (C++20): its memory and products, and
// every registered device module; a module registered later is built when
// one of its kernels is first launched.
func OpenSim(dir string) (*Sim, error) {
	s := &Sim{core: newCore(), dir: dir}
	if err := s.open(); err != nil {
		_ = s.Close() // the error above says what matters
		return nil, errors.Wrap(err, "simulated device")
	}
	return s, nil
}

// open builds and loads the base library and the registered modules.
func (s *Sim) open() error {
	if v, err := exec.Command("g++", "--version").Output(); err == nil {
		s.gxx = v // without it, nothing is cached
	}
	so, err := build(s.gxx, filepath.Join(s.dir, "base"), nil, "#include \"sim.h\"\n")
	if err != nil {
		return err
	}
	if s.base, err = openLibrary("the simulated device", []string{so}); err != nil {
		return err
	}
	err = s.base.bind(map[string]any{"sim_alloc": &s.alloc, "sim_free": &s.free, "sim_copy": &s.toDev,
		"sim_gemm": &s.gemm, "sim_gemm_table": &s.table})
	if err == nil {
		err = s.base.bind(map[string]any{"sim_copy": &s.toHost, "sim_alloc": &s.allocHost, "sim_free": &s.freeHost})
	}
	if err != nil {
		return err
	}
	if s.args = s.allocHost(2 * 8 * graph.MaxLaunchArgs); s.args == nil {
		return errors.New("out of memory")
	}
	for i := range graph.MaxLaunchArgs {
		*(*uintptr)(unsafe.Add(s.args, 8*(graph.MaxLaunchArgs+i))) = uintptr(unsafe.Add(s.args, 8*i))
	}
	for _, m := range graph.DeviceModules() {
		if err := s.loadModule(m); err != nil {
			return err
		}
	}
	return nil
}

// loadModule builds m's kernels and loads them.
func (s *Sim) loadModule(m *graph.DeviceModule) error {
	for len(s.mods) <= m.Index() {
		s.mods = append(s.mods, nil)
	}
	var main strings.Builder
	main.WriteString("#include \"sim.h\"\n")
	for _, f := range m.Files() {
		fmt.Fprintf(&main, "#include %q\n", f)
	}
	main.WriteString("static const sim::Kernel sim_kernels[] = {\n")
	for _, k := range m.Kernels() {
		fmt.Fprintf(&main, "SIM_KERNEL(%s, %t)\n", k.Name(), k.SharedMemory())
	}
	main.WriteString("};\nSIM_LAUNCH\n")
	so, err := build(s.gxx, filepath.Join(s.dir, fmt.Sprintf("module%d", m.Index())), m.FS(), main.String())
	if err != nil {
		return errors.Wrapf(err, "device module %s", m.Name())
	}
	lib, err := openLibrary("the simulated device's "+m.Name(), []string{so})
	if err != nil {
		return err
	}
	mod := &simModule{lib: lib}
	if err := lib.bind(map[string]any{"sim_launch": &mod.launch}); err != nil {
		_ = lib.close() // the error above says what matters
		return err
	}
	s.mods[m.Index()] = mod
	return nil
}

// gxxFlags are how the simulated device's libraries are compiled.
var gxxFlags = []string{"-std=c++20", "-O2", "-shared", "-fPIC", "-pthread", "-Wall", "-Werror", "-Wno-unused-function"}

// build writes the shim, the files of src (nil: none) and main.cpp into dir,
// and compiles main.cpp into dir/sim.so: or copies there the library the
// same sources and compiler (gxx, its --version; nil: unknown, no cache)
// made before, kept in the user's cache folder (transformer-go/sim, by the
// sources' hash), as go build keeps its work. dir is scratch: its files
// are written without syncs, the cache's durably.
func build(gxx []byte, dir string, src fs.FS, main string) (string, error) {
	files, err := sources(src, main)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for name, b := range files {
		if err := atomicfile.WriteScratch(filepath.Join(dir, name), b); err != nil {
			return "", err
		}
	}
	so := filepath.Join(dir, "sim.so")
	cached := cachePath(gxx, files)
	if b, err := os.ReadFile(cached); err == nil && cached != "" {
		return so, atomicfile.WriteScratch(so, b)
	}
	cmd := exec.Command("g++", append(slices.Clone(gxxFlags), "-o", so, filepath.Join(dir, "main.cpp"))...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", errors.Wrapf(err, "g++ %s: %s", dir, out)
	}
	if b, err := os.ReadFile(so); err == nil && cached != "" {
		_ = os.MkdirAll(filepath.Dir(cached), 0o755) // a cache that cannot be written is only slower
		_ = atomicfile.WriteBytes(cached, b)
	}
	return so, nil
}

// sources are the files of a library: the shim, the module's sources of
// src (nil: none) and main.cpp, by name.
func sources(src fs.FS, main string) (map[string][]byte, error) {
	files := map[string][]byte{"main.cpp": []byte(main)}
	for _, f := range []string{"sim.h", "include/common.cuh"} {
		b, err := shim.ReadFile(f)
		if err != nil {
			return nil, err
		}
		files[filepath.Base(f)] = b
	}
	if src == nil {
		return files, nil
	}
	mod, err := moduleSources(src)
	if err != nil {
		return nil, err
	}
	maps.Copy(files, mod)
	return files, nil
}

// moduleSources are a module's CUDA C files in src, its .cu and .cuh, by
// name.
func moduleSources(src fs.FS) (map[string][]byte, error) {
	entries, err := fs.ReadDir(src, ".")
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	for _, e := range entries {
		if ext := filepath.Ext(e.Name()); ext == ".cu" || ext == ".cuh" {
			if files[e.Name()], err = fs.ReadFile(src, e.Name()); err != nil {
				return nil, err
			}
		}
	}
	return files, nil
}

// cachePath is where the library of files is kept, named by the hash of
// the files, the flags and g++'s version; "" if there is no cache folder
// or g++ cannot say its version (version is nil).
func cachePath(version []byte, files map[string][]byte) string {
	root, err := os.UserCacheDir()
	if err != nil || version == nil {
		return ""
	}
	h := sha256.New()
	for _, part := range [][]byte{version, []byte(strings.Join(gxxFlags, " "))} {
		fmt.Fprintf(h, "%d:%s", len(part), part)
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		fmt.Fprintf(h, "%d:%s%d:%s", len(name), name, len(files[name]), files[name])
	}
	return filepath.Join(root, "transformer-go", "sim", hex.EncodeToString(h.Sum(nil))+".so")
}

// Name implements graph.Backend.
func (s *Sim) Name() string { return "simulated (CUDA source on the host)" }

// Alloc implements graph.Backend.
func (s *Sim) Alloc(n int) (graph.DevicePtr, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n <= 0 {
		return 0, errors.Errorf("sim: alloc: %d bytes", n)
	}
	p := s.alloc(uintptr(n))
	if p == 0 {
		return 0, errors.Errorf("sim: out of memory allocating %d bytes", n)
	}
	return p, errors.Wrap(s.allocs.add(p, n), "sim")
}

// Free implements graph.Backend.
func (s *Sim) Free(p graph.DevicePtr) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.allocs.remove(p); err != nil {
		return errors.Wrap(err, "sim")
	}
	s.free(p)
	return nil
}

// ToDevice implements graph.Backend.
func (s *Sim) ToDevice(dst graph.DevicePtr, src []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkCopy("sim: to device", dst, len(src)); err != nil || len(src) == 0 {
		return err
	}
	s.toDev(dst, unsafe.Pointer(&src[0]), uintptr(len(src)))
	return nil
}

// ToHost implements graph.Backend.
func (s *Sim) ToHost(dst []byte, src graph.DevicePtr) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkCopy("sim: to host", src, len(dst)); err != nil || len(dst) == 0 {
		return err
	}
	s.toHost(unsafe.Pointer(&dst[0]), src, uintptr(len(dst)))
	return nil
}

// Launch implements graph.Backend.
func (s *Sim) Launch(l *graph.Launch) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkLaunch(l); err != nil {
		return errors.Wrap(err, "sim")
	}
	m := l.Kernel.Module()
	if m.Index() >= len(s.mods) || s.mods[m.Index()] == nil {
		if err := s.loadModule(m); err != nil {
			return errors.Wrap(err, "sim")
		}
	}
	for i, a := range l.Args() {
		*(*uint64)(unsafe.Add(s.args, 8*i)) = a
	}
	g, b := l.Grid.Dims(), l.Block.Dims()
	switch s.mods[m.Index()].launch(int32(l.Kernel.Index()), g[0], g[1], g[2], b[0], b[1], b[2], unsafe.Add(s.args, 8*graph.MaxLaunchArgs)) {
	case 0:
		return nil
	case 1:
		return errors.Errorf("sim: kernel %s is not in the simulated device", l.Kernel)
	case 3:
		return errors.Errorf("sim: kernel %s calls __syncthreads but declares no __shared__ memory", l.Kernel)
	}
	return errors.Errorf("sim: kernel %s: cannot start %d threads", l.Kernel, b[0]*b[1]*b[2])
}

// Gemm implements graph.Backend.
func (s *Sim) Gemm(g *graph.DeviceGEMM) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkGemm(g); err != nil {
		return errors.Wrap(err, "sim")
	}
	if g.Outer > 1 {
		s.table(b2i(g.TransA), b2i(g.TransB), int32(g.M), int32(g.N), int32(g.K), g.Alpha, g.Table, int32(g.LDA), int32(g.LDB),
			g.Beta, int32(g.LDC), b2i(g.BF16), int32(g.Batch*g.Outer))
		return nil
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

// Sync implements graph.Backend; the simulated device's work ends before
// its call returns.
func (s *Sim) Sync() error { return nil }

// Record implements graph.Backend: the simulated device keeps work and runs
// it again at every Run, through the same checked calls.
func (s *Sim) Record(work func() error) (graph.Replay, error) { return rerun(work), nil }

// rerun is a replay that makes its work again.
type rerun func() error

// Run implements graph.Replay.
func (r rerun) Run() error { return r() }

// Close implements graph.Replay.
func (r rerun) Close() error { return nil }

// Close implements graph.Backend.
func (s *Sim) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.base == nil {
		return nil
	}
	for _, p := range s.allocs.bases() {
		s.free(p)
	}
	if s.args != nil {
		s.freeHost(s.args)
	}
	s.allocs, s.args = newAllocs(), nil
	err := s.base.close()
	for _, m := range s.mods {
		if m != nil {
			if merr := m.lib.close(); err == nil {
				err = merr
			}
		}
	}
	s.base, s.mods = nil, nil
	return err
}
