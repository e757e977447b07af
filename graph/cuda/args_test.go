package cuda

import (
	"strings"
	"testing"
)

// TestBadCalls checks that a wrong launch, copy, product or free is an error
// naming what is wrong, made before anything runs.
func TestBadCalls(t *testing.T) {
	for _, d := range devices(t) {
		t.Run(d.Name(), func(t *testing.T) {
			p, err := d.Alloc(64)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = d.Free(p) }()
			one := Dim3{X: 1}
			for _, c := range []struct {
				err  error
				want string
			}{
				{d.Launch("nope", one, one), `no kernel "nope"`},
				{d.Launch("fill_f32", one, one, p, float32(1)), "kernel graph.fill_f32 takes 3 arguments, have 2"},
				{d.Launch("fill_f32", one, one, p, 1, 16), "argument 2 (v): have int (int), want float (float32)"},
				{d.Launch("fill_f32", one, one, p, float32(1), float32(16)), "argument 3 (n): have float (float32), want int (int)"},
				{d.Launch("fill_f32", one, one, p, float32(1), 1<<40), "does not fit a C int"},
				{d.Launch("dropout_mask", one, one, p, 7, uint64(0), 16), "argument 2 (seed): have int (int), want pointer (DevicePtr)"},
				{d.Launch("dropout_mask", one, one, p, p, 0, 16), "argument 3 (threshold): have int (int), want unsigned long long (uint64)"},
				{d.Launch("fill_f32", one, one, p+64, float32(1), 16), "argument 1 (y): 1 bytes at"},
				{d.Launch("fill_f32", one, Dim3{X: 96}, p, float32(1), 16), "has 96 threads, want a power of two up to 1024"},
				{d.Launch("fill_f32", one, Dim3{X: 2048}, p, float32(1), 16), "has 2048 threads"},
				{d.Launch("fill_f32", Dim3{X: -1}, one, p, float32(1), 16), "grid {-1 0 0} out of range"},
				{d.ToDevice(p+8, make([]byte, 64)), "64 bytes at"},
				{d.ToHost(make([]byte, 65), p), "65 bytes at"},
				{d.Free(p + 4), "is not an allocation"},
				{d.Gemm(GEMM{M: 2, N: 2, K: 2, A: p, B: p, C: p, LDA: 1, LDB: 2, LDC: 2, Batch: 1}), "row strides LDA=1"},
				{d.Gemm(GEMM{M: 0, N: 2, K: 2}), "sizes M=0"},
				{d.Gemm(GEMM{M: 2, N: 2, K: 2, LDA: 2, LDB: 2, LDC: 2, Batch: 1}), "gemm: matrix A: 16 bytes at 0x0 are not within one allocation"},
				{d.Gemm(GEMM{M: 2, N: 2, K: 2, A: p, B: p, C: p, LDA: 2, LDB: 2, LDC: 2, Batch: 2, StrideA: 4, StrideB: 4, StrideC: 2}), "the products would overlap"},
				{d.Gemm(GEMM{M: 4, N: 4, K: 4, A: p, B: p, C: p + 4, LDA: 4, LDB: 4, LDC: 4, Batch: 1}), "gemm: matrix C: 64 bytes at"},
				{d.Gemm(GEMM{M: 2, N: 2, K: 2, A: p, B: p, C: p, LDA: 2, LDB: 2, LDC: 2, Batch: 5, StrideC: 4}), "gemm: matrix C: 80 bytes at"},
			} {
				if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
					t.Errorf("error %v, want one containing %q", c.err, c.want)
				}
			}
		})
	}
}
