package gemm

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestPackersAVX checks the AVX packers against the portable ones on every
// shape up to 13×40, in panels as wide as the block and wider, including the
// 6-row panels of A that transpose6x8 writes.
func TestPackersAVX(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for rows := 1; rows <= 13; rows++ {
		for cols := 1; cols <= 40; cols++ {
			ld := cols + 3
			src := random[float32](rng, rows, cols, ld)
			for _, pad := range []int{0, 5} {
				check := func(name string, avx, portable packer[float32], w, n int) {
					got, want := slices.Repeat([]float32{-1}, n), slices.Repeat([]float32{-1}, n)
					avx(got, w, src, ld, rows, cols)
					portable(want, w, src, ld, rows, cols)
					if !slices.Equal(got, want) {
						t.Errorf("%s %dx%d, w=%d: got %v, want %v", name, rows, cols, w, got, want)
					}
				}
				check("scatterAVX", scatterAVX, scatter[float32], rows+pad, cols*(rows+pad))
				check("gatherAVX", gatherAVX, gather[float32], cols+pad, rows*(cols+pad))
			}
		}
	}
}

func BenchmarkPackA(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, k := range []int{32, 256} {
		src, dst := random[float32](rng, 6, k, k), make([]float32, 6*k)
		b.Run(fmt.Sprintf("6x%d", k), func(b *testing.B) {
			for b.Loop() {
				scatterAVX(dst, 6, src, k, 6, k)
			}
			b.SetBytes(int64(4 * len(dst)))
		})
	}
}
