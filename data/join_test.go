package data

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestJoinedBatches checks the rows of joined batches, by hand for two
// examples and by the rule for random ones: decoder input BOSID source
// EOSID target, decoder target the same shifted with the source's part
// padding, no source matrix.
func TestJoinedBatches(t *testing.T) {
	examples := []Example{{Src: []int{5, 6}, Tgt: []int{7, 8, 9}}, {Tgt: []int{10, 11}}}
	b, err := NewBatcher(examples, BatchConfig{MaxTokens: 16, Buckets: []int{8}, Join: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := b.EvalBatches(examples)
	if err != nil {
		t.Fatal(err)
	}
	want := Batch{
		Rows: 2, SrcLen: 0, TgtLen: 8, Src: []int{},
		TgtIn:    []int{BOSID, 5, 6, EOSID, 7, 8, 9, 0, BOSID, 10, 11, 0, 0, 0, 0, 0},
		TgtOut:   []int{0, 0, 0, 7, 8, 9, EOSID, 0, 10, 11, EOSID, 0, 0, 0, 0, 0},
		Examples: 2, Index: []int{0, 1}, TgtTokens: 7,
	}
	if len(got) != 1 || !equalBatch(got[0], want) {
		t.Fatalf("joined batch\n got %+v\nwant %+v", got, want)
	}
	if s := b.Shapes(); len(s) != 1 || s[0] != (Shape{Rows: 2, SrcLen: 0, TgtLen: 8}) {
		t.Fatalf("shapes %+v", s)
	}
	random := randomExamples(rand.New(rand.NewPCG(3, 3)), 200, 12)
	rb, err := NewBatcher(random, BatchConfig{MaxTokens: 256, Join: true, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for range rb.EpochLen() {
		b := rb.Next()
		if b.SrcLen != 0 || len(b.Src) != 0 {
			t.Fatalf("a joined batch has sources: %+v", b.Shape())
		}
		for r, i := range b.Index {
			e := random[i]
			prompt := 0
			if len(e.Src) > 0 {
				prompt = len(e.Src) + 1
			}
			in := padded(b.TgtLen, append([]int{BOSID}, joined(e)...)...)
			out := padded(b.TgtLen, append(make([]int, prompt), append(slices.Clone(e.Tgt), EOSID)...)...)
			if !slices.Equal(row(b.TgtIn, r, b.TgtLen), in) || !slices.Equal(row(b.TgtOut, r, b.TgtLen), out) {
				t.Fatalf("example %+v: rows %v, %v, want %v, %v", e, row(b.TgtIn, r, b.TgtLen), row(b.TgtOut, r, b.TgtLen), in, out)
			}
		}
	}
	if _, err := NewBatcher([]Example{{Src: []int{5, 6, 7}, Tgt: []int{7, 8, 9, 10}}}, BatchConfig{MaxTokens: 16, Buckets: []int{8}, Join: true}); err == nil {
		t.Fatal("an example of joined length 9 fit a bucket of 8")
	}
}

func equalBatch(a, b Batch) bool {
	return a.Shape() == b.Shape() && slices.Equal(a.Src, b.Src) && slices.Equal(a.TgtIn, b.TgtIn) && slices.Equal(a.TgtOut, b.TgtOut) &&
		a.Examples == b.Examples && slices.Equal(a.Index, b.Index) && a.SrcTokens == b.SrcTokens && a.TgtTokens == b.TgtTokens
}
