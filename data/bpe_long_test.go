package data

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// longWord is a word of n letters over a small alphabet, with runs, so
// that pairs overlap ("aaa") and merges repeat within the word.
func longWord(rng *rand.Rand, n int) string {
	var b strings.Builder
	for b.Len() < n {
		c := byte('a' + rng.IntN(4))
		for range 1 + rng.IntN(3) {
			b.WriteByte(c)
		}
	}
	return b.String()[:n]
}

// TestLearnBPEMatchesTheReference: the learner that indexes positions
// learns the merges of the one that rescanned words, on random corpora, on
// corpora with long words, and on Multi30k's first 3,000 pairs; and its
// merges encode every word as the reference encoder does.
func TestLearnBPEMatchesTheReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	corpora := map[string][]string{"sennrich": sennrichCorpus}
	for i := range 20 {
		corpora["random "+string(rune('a'+i))] = randomCorpus(rng, 1+rng.IntN(400))
	}
	corpora["long words"] = []string{longWord(rng, 3000), longWord(rng, 2000) + " " + longWord(rng, 50), "aaaaaaaaaaaaaaaa abab ab"}
	corpora["one long word"] = []string{strings.Repeat("a", 1000) + "b" + strings.Repeat("ab", 400)}
	for name, corpus := range corpora {
		for _, n := range []int{1, 40, 500} {
			want, err := referenceLearnBPE(corpus, n)
			if err != nil {
				t.Fatal(err)
			}
			got, err := LearnBPE(corpus, n)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Merges(), want.Merges()) {
				t.Fatalf("%s, %d merges: learned %d merges, the reference %d; first difference at %d",
					name, n, len(got.Merges()), len(want.Merges()), firstDifference(got.Merges(), want.Merges()))
			}
			for piece := range countPieces(corpus) {
				syms := initialSymbols(piece)
				if g, w := got.applyMerges(syms), referenceApplyMerges(want, syms); !slices.Equal(g, w) {
					t.Fatalf("%s, %d merges: %q encodes as %q, the reference %q", name, n, piece, g, w)
				}
			}
		}
	}
}

func TestLearnBPEMatchesTheReferenceOnMulti30k(t *testing.T) {
	if testing.Short() {
		t.Skip("learns BPE twice on 3,000 pairs")
	}
	pairs := readMulti30k(t, "train")[:3000]
	var text []string
	for _, p := range pairs {
		text = append(text, p.Src, p.Tgt)
	}
	want, err := referenceLearnBPE(text, 2000)
	if err != nil {
		t.Fatal(err)
	}
	got, err := LearnBPE(text, 2000)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Merges(), want.Merges()) {
		t.Fatalf("learned merges differ from the reference's at %d", firstDifference(got.Merges(), want.Merges()))
	}
}

// firstDifference is the first index where a and b differ.
func firstDifference(a, b []Merge) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// cancelAfter is a context whose Err is Canceled from its n-th call on.
type cancelAfter struct {
	context.Context
	n int
}

func (c *cancelAfter) Err() error {
	if c.n--; c.n <= 0 {
		return context.Canceled
	}
	return nil
}

// TestLearnBPEStopsWhenCancelled: learning checks its context between
// merges, and says how far it got.
func TestLearnBPEStopsWhenCancelled(t *testing.T) {
	word := longWord(rand.New(rand.NewPCG(2, 2)), 20000)
	ctx := &cancelAfter{Context: context.Background(), n: 6}
	_, err := LearnBPEContext(ctx, []string{word}, 1000)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "after 5 of 1000 merges") {
		t.Fatalf("a cancelled learning: %v, want it cancelled after 5 merges", err)
	}
}

// BenchmarkLearnBPELongWord learns 2,000 merges from one word of 500,000
// letters: with words rescanned at every merge, minutes.
func BenchmarkLearnBPELongWord(b *testing.B) {
	word := longWord(rand.New(rand.NewPCG(3, 3)), 500_000)
	for b.Loop() {
		bpe, err := LearnBPE([]string{word}, 2000)
		if err != nil {
			b.Fatal(err)
		}
		bpe.Encode(word)
	}
}
