package graph

import (
	"math/rand/v2"
	"testing"
)

// TestPCG holds pcg to rand.PCG's Uint64, draw after draw, from several
// seeds.
func TestPCG(t *testing.T) {
	for _, seed := range [][2]uint64{{0, 0}, {1, 2}, {42, 7}, {1<<64 - 1, 1<<64 - 1}, {0x9e3779b97f4a7c15, 3}} {
		g := rand.NewPCG(seed[0], seed[1])
		hi, lo := seed[0], seed[1]
		for i := range 1000 {
			var u uint64
			hi, lo, u = pcg(hi, lo)
			if want := g.Uint64(); u != want {
				t.Fatalf("seed %v, draw %d: %#x, want %#x", seed, i, u, want)
			}
		}
	}
}

// TestDrawMask holds drawMask to its definition with rand.PCG (block b of
// maskBlock words from the generator seeded with (seed, b), a draw for each
// two elements, low half first), for sizes that end inside a word, a block
// and between them, at several rates.
func TestDrawMask(t *testing.T) {
	for _, p := range []float64{0, 0.1, 0.5, 0.9} {
		threshold := uint64(p * (1 << 32))
		for _, n := range []int{1, 2, 3, 63, 64, 65, 127, 64 * maskBlock, 64*maskBlock + 1, 3*64*maskBlock + 77, 262144} {
			mask := make([]int, (n+63)/64)
			drawMask(99, threshold, n, mask)
			var g *rand.PCG
			var u uint64
			for i := range n {
				if i%(64*maskBlock) == 0 {
					g = rand.NewPCG(99, uint64(i/(64*maskBlock)))
				}
				if i%2 == 0 {
					u = g.Uint64()
				} else {
					u >>= 32
				}
				want := u&(1<<32-1) >= threshold
				if got := mask[i/64]>>(i%64)&1 == 1; got != want {
					t.Fatalf("p %v, n %d: element %d kept %t, want %t", p, n, i, got, want)
				}
			}
			if r := n % 64; r != 0 && mask[len(mask)-1]>>r != 0 {
				t.Fatalf("p %v, n %d: bits set past the last element: %#x", p, n, mask[len(mask)-1])
			}
		}
	}
}
