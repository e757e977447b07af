package cuda

import (
	"flag"
	"strings"
	"testing"

	"github.com/pkg/errors"
)

func TestParseKind(t *testing.T) {
	for _, k := range []Kind{KindCPU, KindCUDA, KindAuto} {
		if got, err := ParseKind(k.String()); err != nil || got != k {
			t.Errorf("ParseKind(%q) = %v, %v", k.String(), got, err)
		}
	}
	for _, s := range []string{"", "CPU", "gpu", "cuda:0", " cpu"} {
		_, err := ParseKind(s)
		contains(t, err, "want one of cpu, cuda, auto")
	}
	var k Kind
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.Var(&k, "device", "where to run")
	if err := fs.Parse([]string{"-device", "auto"}); err != nil || k != KindAuto {
		t.Errorf("-device auto: %v, %v", k, err)
	}
}

func TestChoose(t *testing.T) {
	fail := func() (*CUDA, error) { return nil, errors.New("cuInit: CUDA_ERROR_NO_DEVICE (100)") }
	if d, fb, err := Choose(KindCPU, fail); d != nil || fb != nil || err != nil {
		t.Errorf("cpu: %v, %v, %v", d, fb, err)
	}
	if d, fb, err := Choose(KindCUDA, fail); d != nil || fb != nil || err == nil {
		t.Errorf("cuda without a GPU: %v, %v, %v; want the error", d, fb, err)
	}
	d, fb, err := Choose(KindAuto, fail)
	if d != nil || err != nil {
		t.Errorf("auto without a GPU: %v, %v; want the CPU", d, err)
	}
	contains(t, fb, "device auto: running on the CPU: cuInit: CUDA_ERROR_NO_DEVICE")
	if _, _, err := Choose(Kind(7), fail); err == nil {
		t.Error("an unknown kind chose a device")
	}
}

// TestChooseAutoWithoutGPU is TestChoose's auto with the real Open: with
// the driver library and no GPU it falls back to the CPU, saying why.
func TestChooseAutoWithoutGPU(t *testing.T) {
	needDriverLib(t)
	d, fb, err := Choose(KindAuto, Open)
	if d != nil {
		_ = d.Close()
		t.Skip("a GPU is present")
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Log(fb)
	contains(t, fb, "CUDA_ERROR_NO_DEVICE")
}

func FuzzParseKind(f *testing.F) {
	for _, s := range []string{"cpu", "cuda", "auto", "", "CUDA"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, err := ParseKind(s)
		if err == nil && k.String() != s {
			t.Errorf("ParseKind(%q) = %v", s, k)
		}
	})
}

func FuzzParseKernels(f *testing.F) {
	f.Add(`extern "C" __global__ void k(float* y, const int* x, int n, float s) {}`)
	f.Add(`extern "C" __global__ void k(double d) {} extern "C" __global__ void k() {}`)
	f.Add(`extern "C" __global__ void k(unsigned short* y, int)`)
	f.Fuzz(func(t *testing.T, src string) {
		ks, err := parseKernels("fuzz.cu", src)
		if err != nil {
			return
		}
		for name, ps := range ks {
			for _, p := range ps {
				if p.name == "" || (p.kind != kindPtr && p.kind != kindInt && p.kind != kindFloat) {
					t.Errorf("kernel %s: parameter %+v", name, p)
				}
			}
		}
	})
}

// TestParseKernels checks the parser on the forms it must take and refuse.
func TestParseKernels(t *testing.T) {
	ks, err := parseKernels("a.cu", `extern "C" __global__ void k(float* y, const unsigned long long* m, int n, float s) {}`)
	if err != nil {
		t.Fatal(err)
	}
	want := []param{{"y", kindPtr}, {"m", kindPtr}, {"n", kindInt}, {"s", kindFloat}}
	if len(ks["k"]) != len(want) {
		t.Fatalf("k: %v, want %v", ks["k"], want)
	}
	for i, p := range ks["k"] {
		if p != want[i] {
			t.Errorf("k parameter %d: %v, want %v", i, p, want[i])
		}
	}
	// Every kernel in the source is found (none hides in a macro).
	sigs, files, err := kernels()
	if err != nil {
		t.Fatal(err)
	}
	decls := 0
	for _, f := range files {
		src, _ := source.ReadFile("kernels/" + f)
		decls += strings.Count(string(src), "__global__")
	}
	if decls != len(sigs) {
		t.Errorf("the .cu files declare %d kernels, the parser found %d", decls, len(sigs))
	}
	for src, msg := range map[string]string{
		`extern "C" __global__ void k(double d) {}`:                                     `parameter "d": type "double"`,
		`extern "C" __global__ void k(int) {}`:                                          `parameter "int" has no type and name`,
		`extern "C" __global__ void k() {}`:                                             `parameter "" has no type and name`,
		`extern "C" __global__ void k(int n) {} extern "C" __global__ void k(int n) {}`: "kernel k declared twice",
	} {
		_, err := parseKernels("a.cu", src)
		contains(t, err, "a.cu", msg)
	}
}

func TestSharedKernels(t *testing.T) {
	src := `extern "C" __global__ void a(int n) { for (;;) { if (n) { return; } } }
__device__ float helper() { __shared__ float s[4]; return s[0]; }
extern "C" __global__ void b(float* y) { __shared__ float s[32]; { y[0] = s[0]; } }
extern "C" __global__ void c(float* y);`
	got := sharedKernels(src)
	if len(got) != 3 || got["a"] || !got["b"] || got["c"] {
		t.Errorf("sharedKernels = %v, want a: false, b: true, c: false", got)
	}
}
