package cuda

import (
	"fmt"
	"os/exec"
	"testing"
)

// openBench opens the GPU for a benchmark, or skips it.
func openBench(b *testing.B) testDevice {
	b.Helper()
	d, err := Open()
	if err != nil {
		b.Skipf("no GPU: %v", err)
	}
	b.Cleanup(func() { _ = d.Close() })
	return testDevice{Backend: d}
}

// mustDo fails the benchmark on err.
func mustDo(b *testing.B, err error) {
	b.Helper()
	if err != nil {
		b.Fatal(err)
	}
}

// BenchmarkCUDAGemm times square products on the GPU, float32 (Sgemm, no
// TF32) and bfloat16 inputs with float32 sums (GemmEx).
func BenchmarkCUDAGemm(b *testing.B) {
	d := openBench(b)
	for _, n := range []int{1024, 4096} {
		for _, bf16 := range []bool{false, true} {
			b.Run(fmt.Sprintf("n=%d/bf16=%t", n, bf16), func(b *testing.B) {
				f, err := d.Alloc(4 * n * n)
				mustDo(b, err)
				h, err := d.Alloc(2 * n * n)
				mustDo(b, err)
				c, err := d.Alloc(4 * n * n)
				mustDo(b, err)
				defer func() { _, _, _ = d.Free(f), d.Free(h), d.Free(c) }()
				mustDo(b, d.Launch("fill_f32", Dim3{X: 1024}, Dim3{X: 256}, f, float32(0.01), n*n))
				mustDo(b, d.Launch("to_bf16", Dim3{X: 1024}, Dim3{X: 256}, h, f, n*n))
				g := GEMM{M: n, N: n, K: n, Alpha: 1, A: f, B: f, C: c, LDA: n, LDB: n, LDC: n, Batch: 1}
				if bf16 {
					g.A, g.B, g.BF16 = h, h, true
				}
				mustDo(b, d.Sync())
				b.ResetTimer()
				for range b.N {
					mustDo(b, d.Gemm(g))
				}
				mustDo(b, d.Sync())
				b.ReportMetric(2*float64(n)*float64(n)*float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e12, "TFLOP/s")
			})
		}
	}
}

// benchBytes is how many float32 values the bandwidth benchmarks read (and
// as many they write): 512 MB each way.
const benchBytes = 1 << 27

// BenchmarkCUDACopy times an elementwise copy (scale_f32 by 1) of
// benchBytes floats: the bandwidth the row kernels are held to, in GB/s
// read and written.
func BenchmarkCUDACopy(b *testing.B) {
	d := openBench(b)
	x, y := benchBuffers(b, d)
	l := Dim3{X: 65536}
	mustDo(b, d.Sync())
	b.ResetTimer()
	for range b.N {
		mustDo(b, d.Launch("scale_f32", l, Dim3{X: 256}, y, x, float32(1), benchBytes))
	}
	mustDo(b, d.Sync())
	b.ReportMetric(8*benchBytes*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
}

// BenchmarkCUDASoftmax times the row softmax of benchBytes floats, in rows
// of an attention's 128 keys and of a 32000-word vocabulary, in GB/s read
// and written once (the kernel reads each row twice).
func BenchmarkCUDASoftmax(b *testing.B) {
	d := openBench(b)
	x, y := benchBuffers(b, d)
	for _, cols := range []int{128, 32000} {
		b.Run(fmt.Sprintf("cols=%d", cols), func(b *testing.B) {
			rows := benchBytes / cols
			l := Dim3{X: min(rows, 65536)}
			block := Dim3{X: min(256, max(32, cols))}
			mustDo(b, d.Sync())
			b.ResetTimer()
			for range b.N {
				mustDo(b, d.Launch("softmax_fwd_f32", l, block, y, x, Ptr(0), rows, cols, float32(1), 1, 1, 0, 0, 0, 1))
			}
			mustDo(b, d.Sync())
			b.ReportMetric(8*float64(rows*cols)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
}

// BenchmarkCUDALayerNorm times the layer norm of benchBytes floats in rows
// of base's 512, centered or not (RMS), in GB/s read and written once.
func BenchmarkCUDALayerNorm(b *testing.B) {
	d := openBench(b)
	x, y := benchBuffers(b, d)
	const cols = 512
	rows := benchBytes / cols
	g, err := d.Alloc(4 * cols)
	mustDo(b, err)
	stats, err := d.Alloc(8 * rows)
	mustDo(b, err)
	defer func() { _, _ = d.Free(g), d.Free(stats) }()
	mustDo(b, d.Launch("fill_f32", Dim3{X: 2}, Dim3{X: 256}, g, float32(1), cols))
	for _, center := range []int{1, 0} {
		b.Run(fmt.Sprintf("center=%d", center), func(b *testing.B) {
			mustDo(b, d.Sync())
			b.ResetTimer()
			for range b.N {
				mustDo(b, d.Launch("layernorm_fwd_f32", Dim3{X: 65536}, Dim3{X: 256}, y, stats, stats.Add(4*rows), x, g, Ptr(0),
					rows, cols, float32(1e-5), center))
			}
			mustDo(b, d.Sync())
			b.ReportMetric(8*float64(rows*cols)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
}

// benchBuffers are two device buffers of benchBytes floats, x filled.
func benchBuffers(b *testing.B, d testDevice) (x, y Ptr) {
	x, err := d.Alloc(4 * benchBytes)
	mustDo(b, err)
	y, err = d.Alloc(4 * benchBytes)
	mustDo(b, err)
	b.Cleanup(func() { _, _ = d.Free(x), d.Free(y) })
	mustDo(b, d.Launch("fill_f32", Dim3{X: 65536}, Dim3{X: 256}, x, float32(0.5), benchBytes))
	return x, y
}

// BenchmarkSimLaunch times one small elementwise launch (4096 elements, 16
// blocks of 256 threads) on the simulated device: the cost a program pays
// per op there.
func BenchmarkSimLaunch(b *testing.B) {
	if _, err := exec.LookPath("g++"); err != nil {
		b.Skip("no g++ (apt-get install g++)")
	}
	sim, err := OpenSim(b.TempDir())
	mustDo(b, err)
	defer func() { _ = sim.Close() }()
	s := testDevice{Backend: sim}
	const n = 4096
	p, err := s.Alloc(4 * n)
	mustDo(b, err)
	b.ResetTimer()
	for range b.N {
		mustDo(b, Elems(s, "fill_f32", n, p, float32(1), n))
	}
}

// BenchmarkSimRows times a row kernel on the simulated device: the
// log-softmax of 64 rows of 1000 (blocks of 256 threads and a barrier).
func BenchmarkSimRows(b *testing.B) {
	if _, err := exec.LookPath("g++"); err != nil {
		b.Skip("no g++ (apt-get install g++)")
	}
	sim, err := OpenSim(b.TempDir())
	mustDo(b, err)
	defer func() { _ = sim.Close() }()
	s := testDevice{Backend: sim}
	const rows, cols = 64, 1000
	x, err := s.Alloc(4 * rows * cols)
	mustDo(b, err)
	mustDo(b, Elems(s, "fill_f32", rows*cols, x, float32(1), rows*cols))
	b.ResetTimer()
	for range b.N {
		mustDo(b, Rows(s, "logsoftmax_fwd_f32", rows, cols, x, x, rows, cols))
	}
}

// BenchmarkOpenSim times opening and closing the simulated device with its
// libraries in the user's cache folder: what every test on it pays first.
func BenchmarkOpenSim(b *testing.B) {
	if _, err := exec.LookPath("g++"); err != nil {
		b.Skip("no g++ (apt-get install g++)")
	}
	for range b.N {
		sim, err := OpenSim(b.TempDir())
		mustDo(b, err)
		mustDo(b, sim.Close())
	}
}
