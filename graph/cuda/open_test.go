package cuda

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/graph"
)

func TestOpenDriverMissing(t *testing.T) {
	cfg := DefaultConfig()
	cfg.DriverLibs = []string{"/nonexistent/libcuda.so.1", "libcuda-absent.so.1"}
	_, err := OpenConfig(cfg)
	t.Log(err)
	contains(t, err, "cannot load the CUDA driver", "/nonexistent/libcuda.so.1 (", "libcuda-absent.so.1 (")
}

func TestOpenWrongLibrary(t *testing.T) {
	cfg := DefaultConfig()
	cfg.DriverLibs = []string{"libc.so.6"}
	_, err := OpenConfig(cfg)
	t.Log(err)
	contains(t, err, "libc.so.6 has no function cu")
}

func TestOpenCublasMissing(t *testing.T) {
	needDriverLib(t)
	cfg := DefaultConfig()
	cfg.CublasLibs = []string{"/nonexistent/libcublas.so.13"}
	_, err := OpenConfig(cfg)
	t.Log(err)
	contains(t, err, "cannot load cuBLAS", "/nonexistent/libcublas.so.13 (")
}

// TestOpenDriverTooOld asks for a CUDA no driver supports: the version is
// checked before cuInit, so it needs no GPU.
func TestOpenDriverTooOld(t *testing.T) {
	needDriverLib(t)
	cfg := DefaultConfig()
	cfg.MinDriver = 99000
	_, err := OpenConfig(cfg)
	t.Log(err)
	contains(t, err, "the NVIDIA driver (libcuda.so.1) supports CUDA ", "the kernels need CUDA 99.0 or later")
}

// TestOpenNoDevice opens the device with the driver library and no GPU, as
// CI has it (Debian's libcuda.so.1).
func TestOpenNoDevice(t *testing.T) {
	needDriverLib(t)
	d, err := Open()
	if err == nil {
		_ = d.Close()
		t.Skip("a GPU is present")
	}
	var de *DriverError
	if !errors.As(err, &de) || !de.NoDevice() {
		t.Fatalf("Open without a GPU: %v, want cuInit's CUDA_ERROR_NO_DEVICE", err)
	}
	t.Log(err)
	contains(t, err, "cuda: no usable GPU (driver for CUDA ", "cuInit: CUDA_ERROR_NO_DEVICE (100)")
}

func TestCapabilityTooLow(t *testing.T) {
	contains(t, checkCapability("GPU 0 (T4)", 75, 80), "GPU 0 (T4) is not usable: the kernels need compute capability 8.0 or later")
	if err := checkCapability("GPU 0 (H200)", 90, 80); err != nil {
		t.Error(err)
	}
}

// TestOpenOnGPU opens a GPU where there is one, and says why not where not.
func TestOpenOnGPU(t *testing.T) {
	d, err := Open()
	if err != nil {
		t.Skipf("no GPU: %v", err)
	}
	t.Log(d.Name())
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Alloc(4); err == nil {
		t.Error("Alloc after Close succeeded")
	}
}

// TestPTXIsCurrent checks that the committed PTX of every registered
// device module is what nvcc makes of its committed source (go generate in
// the module's package remakes it, with ptx.sh), and that nvcc makes the
// same PTX twice (it did not, once, for a loop it unrolled).
func TestPTXIsCurrent(t *testing.T) {
	needTool(t, "nvcc", toolkitHint)
	sameNVCC(t)
	for _, m := range graph.DeviceModules() {
		src := t.TempDir()
		writeSource(t, m, src)
		dirs := []string{t.TempDir(), t.TempDir()}
		for _, dir := range dirs {
			if out, err := exec.Command("sh", "ptx.sh", src, dir).CombinedOutput(); err != nil {
				t.Fatalf("ptx.sh: %v\n%s", err, out)
			}
		}
		for _, f := range m.Files() {
			ptx := m.PTXName(f)
			var made [2][]byte
			var err error
			for i, dir := range dirs {
				if made[i], err = os.ReadFile(filepath.Join(dir, ptx)); err != nil {
					t.Fatal(err)
				}
			}
			have, err := fs.ReadFile(m.FS(), ptx)
			switch {
			case !bytes.Equal(made[0], made[1]):
				t.Errorf("%s: nvcc made two different PTX of %s: write its kernels so that it does not", m.Name(), f)
			case err != nil || !bytes.Equal(have, made[0]):
				t.Errorf("%s: %s is not nvcc's PTX of %s (%v): run go generate in the module's package", m.Name(), ptx, f, err)
			}
		}
	}
}

// writeSource writes the module's .cu and .cuh files into dir.
func writeSource(t *testing.T, m *graph.DeviceModule, dir string) {
	t.Helper()
	files, err := moduleSources(m.FS())
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// sameNVCC skips the test (fails it under CI=true) unless nvcc is the
// release that made the committed PTX, which names it in its header: other
// releases write other PTX.
func sameNVCC(t *testing.T) {
	t.Helper()
	out, err := exec.Command("nvcc", "--version").Output()
	if err != nil {
		t.Fatalf("nvcc --version: %v", err)
	}
	m := graph.DeviceModules()[0]
	ptx, err := fs.ReadFile(m.FS(), m.PTXName(m.Files()[0]))
	if err != nil {
		t.Fatal(err)
	}
	release := regexp.MustCompile(`Cuda compilation tools, release [^\n]*`)
	have, want := release.Find(out), release.Find(ptx)
	if want == nil || !bytes.Equal(have, want) {
		msg := fmt.Sprintf("nvcc is %q; the committed PTX is from %q (Debian's nvidia-cuda-toolkit; %s)", have, want, toolkitHint)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
}

// TestPTXAssembles checks that ptxas accepts every module's PTX for Hopper
// (sm_90).
func TestPTXAssembles(t *testing.T) {
	needTool(t, "ptxas", toolkitHint)
	dir := t.TempDir()
	for _, m := range graph.DeviceModules() {
		for _, f := range m.Files() {
			b, err := fs.ReadFile(m.FS(), m.PTXName(f))
			ptx := filepath.Join(dir, m.PTXName(f))
			if err == nil {
				err = os.WriteFile(ptx, b, 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command("ptxas", "-arch=sm_90", "-o", os.DevNull, ptx).CombinedOutput(); err != nil {
				t.Errorf("ptxas -arch=sm_90 %s of %s: %v\n%s", m.PTXName(f), m.Name(), err, out)
			}
		}
	}
}
