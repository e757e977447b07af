package data

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestShardSplitsBatches shards batches of random lengths among 1 to 5 ranks:
// the shares hold every example once, with its ids, balanced by target
// tokens, in shapes that depend on the batch's shape alone.
func TestShardSplitsBatches(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var examples []Example
	for range 300 {
		e := Example{}
		for range 1 + rng.IntN(20) {
			e.Src = append(e.Src, 4+rng.IntN(50))
		}
		for range 1 + rng.IntN(20) {
			e.Tgt = append(e.Tgt, 4+rng.IntN(50))
		}
		examples = append(examples, e)
	}
	b, err := NewBatcher(examples, BatchConfig{MaxTokens: 256, Buckets: StepBuckets(4, 21), Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		batch := b.Next()
		for size := 1; size <= 5; size++ {
			checkShards(t, batch, size)
		}
	}
}

func checkShards(t *testing.T, b Batch, size int) {
	t.Helper()
	var seen []int
	tokens, most, least := 0, 0, 1<<30
	for rank := range size {
		s := b.Shard(rank, size)
		if size > 1 && (s.Rows != (b.Rows+size-1)/size || s.SrcLen != b.SrcLen || s.TgtLen != b.TgtLen) {
			t.Fatalf("rank %d of %d: shape %v of a batch of %v", rank, size, s.Shape(), b.Shape())
		}
		for i, idx := range s.Index {
			r := slices.Index(b.Index, idx)
			if !slices.Equal(s.TgtOut[i*s.TgtLen:(i+1)*s.TgtLen], b.TgtOut[r*b.TgtLen:(r+1)*b.TgtLen]) ||
				!slices.Equal(s.Src[i*s.SrcLen:(i+1)*s.SrcLen], b.Src[r*b.SrcLen:(r+1)*b.SrcLen]) {
				t.Fatalf("rank %d of %d: example %d's ids changed", rank, size, idx)
			}
		}
		seen = append(seen, s.Index...)
		tokens += s.TgtTokens
		most, least = max(most, s.TgtTokens), min(least, s.TgtTokens)
	}
	slices.Sort(seen)
	want := slices.Clone(b.Index)
	slices.Sort(want)
	if !slices.Equal(seen, want) || tokens != b.TgtTokens {
		t.Fatalf("%d ranks: shares hold examples %v (%d tokens), the batch %v (%d)", size, seen, tokens, want, b.TgtTokens)
	}
	if longest := b.TgtLen; b.Examples >= size && most-least > longest {
		t.Errorf("%d ranks: target tokens from %d to %d, more apart than one example (%d)", size, least, most, longest)
	}
}
