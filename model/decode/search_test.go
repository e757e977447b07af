package decode

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestTopK holds topK to its definition: the indices of the k largest
// finite-or-+Inf values (NaN and -Inf never), largest first, the first of
// equal values first, over rows with ties, NaNs and infinities.
func TestTopK(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	specials := []float64{math.NaN(), math.Inf(-1), math.Inf(1), 0, -1}
	for trial := range 2000 {
		n := 1 + rng.IntN(40)
		v := make([]float64, n)
		for i := range v {
			switch r := rng.IntN(10); {
			case r < 2:
				v[i] = specials[rng.IntN(len(specials))]
			case r < 5:
				v[i] = float64(rng.IntN(4)) // ties
			default:
				v[i] = rng.NormFloat64()
			}
		}
		k := 1 + rng.IntN(5)
		var want []int
		for i, x := range v {
			if !math.IsNaN(x) && !math.IsInf(x, -1) {
				want = append(want, i)
			}
		}
		slices.SortStableFunc(want, func(a, b int) int { return cmp.Compare(v[b], v[a]) })
		want = want[:min(k, len(want))]
		if got := topK(v, k); !slices.Equal(got, want) {
			t.Fatalf("trial %d: topK(%v, %d) = %v, want %v", trial, v, k, got, want)
		}
	}
}

// TestLogProbsIntoFirstBadRow checks that rows split among the cores
// report the first bad row's error, as rows taken in order would, and
// widen every row of a good batch.
func TestLogProbsIntoFirstBadRow(t *testing.T) {
	const rows, vocab = 64, 4096
	inf := float32(math.Inf(1))
	fill := func(bad map[int]float32) []float32 {
		src := make([]float32, rows*vocab)
		for i := range src {
			src[i] = -float32(i%vocab) / 100
		}
		src[3*vocab+7] = -inf // a -Inf in a good row
		for r, v := range bad {
			if v == -inf {
				for i := range vocab {
					src[r*vocab+i] = -inf
				}
				continue
			}
			src[r*vocab+vocab/2] = v
		}
		return src
	}
	nan := float32(math.NaN())
	for _, tc := range []struct {
		bad  map[int]float32
		want string
	}{
		{map[int]float32{40: inf, 50: nan, 60: -inf}, "+Inf"},
		{map[int]float32{60: inf, 50: nan, 40: -inf}, "probability 0"},
		{map[int]float32{63: inf, 1: nan}, "NaN"},
	} {
		_, err := logProbsInto(nil, fill(tc.bad), rows, 9)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("bad rows %v: error %v, want one saying %q", tc.bad, err, tc.want)
		}
	}
	src := fill(nil)
	got, err := logProbsInto(nil, src, rows, 9)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range src {
		if got[i] != float64(v) {
			t.Fatalf("element %d is %g, want %g", i, got[i], v)
		}
	}
}
