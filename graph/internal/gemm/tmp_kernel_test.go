package gemm

import "testing"

func BenchmarkTmpKernel(b *testing.B) {
	const kc = 256
	a := make([]float32, 6*kc)
	bb := make([]float32, 16*kc)
	c := make([]float32, 6*16)
	for b.Loop() {
		sgemmKernel6x16(kc, &a[0], &bb[0], &c[0], 16, true)
	}
	b.ReportMetric(2*6*16*kc*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
