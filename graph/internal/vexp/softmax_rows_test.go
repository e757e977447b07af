package vexp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestSoftmaxRows checks SoftmaxRows bit for bit against Softmax row by
// row: every length up to 40 (the four-row kernel's up to 32, and past
// it), row counts that leave every remainder of four, a mask per row, one
// mask for all (stride 0) and none, rows with a NaN or masked entirely
// among the others, in place and not, with and without AVX2.
func TestSoftmaxRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, avx := range []bool{haveAVX2, false} {
		for n := 1; n <= 40; n++ {
			for _, rows := range []int{1, 4, 7, 9, 14} {
				for _, c := range rowCases(rng, n, rows) {
					name := fmt.Sprintf("avx2 %t n %d rows %d %s", avx, n, rows, c.name)
					want := make([]float32, n*rows)
					withAVX2(avx, func() { softmaxEach(want, c.x, c.mask, n, c.stride, 0.3, 0, rows) })
					got := make([]float32, n*rows)
					withAVX2(avx, func() { SoftmaxRows(got, c.x, c.mask, n, c.stride, 0.3) })
					if !equal(got, want) {
						t.Fatalf("%s: %v, row by row %v", name, got, want)
					}
					inPlace := append([]float32(nil), c.x...)
					withAVX2(avx, func() { SoftmaxRows(inPlace, inPlace, c.mask, n, c.stride, 0.3) })
					if !equal(inPlace, want) {
						t.Fatalf("%s: in place %v, row by row %v", name, inPlace, want)
					}
				}
			}
		}
	}
}

// rowCase is SoftmaxRows' input: rows of x, and their masks, stride apart.
type rowCase struct {
	name   string
	x      []float32
	mask   []float32
	stride int
}

// rowCases are rows rows of n random elements with a mask per row, one
// mask for all and none, then the same with a NaN in one row and another
// row masked entirely.
func rowCases(rng *rand.Rand, n, rows int) []rowCase {
	ninf := float32(math.Inf(-1))
	x, masks := make([]float32, n*rows), make([]float32, n*rows)
	for j := range x {
		x[j] = float32(rng.NormFloat64() * 8)
		if j%n > 0 && rng.IntN(4) == 0 {
			masks[j] = ninf
		}
	}
	cases := []rowCase{{"masks", x, masks, n}, {"one mask", x, masks[:n], 0}, {"no mask", x, nil, 0}}
	odd := append([]float32(nil), x...)
	oddMasks := append([]float32(nil), masks...)
	odd[rng.IntN(n*rows)] = float32(math.NaN())
	r := rng.IntN(rows)
	for j := range n {
		oddMasks[r*n+j] = ninf
	}
	return append(cases, rowCase{"a NaN", odd, nil, 0}, rowCase{"a NaN, a row masked", odd, oddMasks, n})
}

func BenchmarkSoftmaxRows(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	const rows, n = 8192, 32
	x, mask, y := make([]float32, rows*n), make([]float32, n), make([]float32, rows*n)
	for j := range x {
		x[j] = float32(rng.NormFloat64())
	}
	for _, kernel := range []string{"rows", "each"} {
		b.Run(kernel, func(b *testing.B) {
			for b.Loop() {
				if kernel == "rows" {
					SoftmaxRows(y, x, mask, n, 0, 0.125)
				} else {
					softmaxEach(y, x, mask, n, 0, 0.125, 0, rows)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/row")
		})
	}
}
