package cuda

import (
	"math/rand/v2"
	"testing"
)

// TestLaunchShapes runs a row kernel and an elementwise kernel through Rows
// and Elems on shapes around their block sizes.
func TestLaunchShapes(t *testing.T) {
	for _, d := range devices(t) {
		e := &env{t: t, d: d, seen: map[string]bool{}}
		r := rand.New(rand.NewPCG(20, 1))
		for _, s := range [][2]int{{1, 1}, {3, 33}, {2, 256}, {2, 257}, {70, 3}} {
			rows, cols := s[0], s[1]
			x := randn(r, rows*cols, 2)
			px, py := e.upload(x), e.alloc(len(x))
			if err := Rows(d, "logsoftmax_fwd_f32", rows, cols, py, px, rows, cols); err != nil {
				t.Fatal(err)
			}
			near(t, "logsoftmax by Rows", e.download(py, len(x)), softmaxRef(f64(x), rows, cols, true), d.tol)
			if err := Elems(d, "scale_f32", len(x), py, px, float32(2), len(x)); err != nil {
				t.Fatal(err)
			}
			want := f64(x)
			for i := range want {
				want[i] *= 2
			}
			near(t, "scale by Elems", e.download(py, len(x)), want, d.tol)
		}
	}
}

// TestKernelSharedMemory checks that graph finds which kernels declare
// __shared__ memory, which the simulated device runs as threads with
// barriers: a row kernel does, an elementwise one does not.
func TestKernelSharedMemory(t *testing.T) {
	for name, want := range map[string]bool{"logsoftmax_fwd_f32": true, "scale_f32": false} {
		k, err := kernelNamed(name)
		if err != nil {
			t.Fatal(err)
		}
		if k.SharedMemory() != want {
			t.Errorf("%s: SharedMemory() = %t, want %t", k, k.SharedMemory(), want)
		}
	}
}
