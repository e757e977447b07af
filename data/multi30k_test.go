package data

import (
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// multi30kDir is where the shared Multi30k files live, relative to this
// package (see ../../shared/README.md).
const multi30kDir = "../../shared/data/multi30k"

// multi30k returns the path of a Multi30k file. If the data is missing the
// test fails when CI=true and is skipped otherwise.
func multi30k(tb testing.TB, name string) string {
	tb.Helper()
	path := filepath.Join(multi30kDir, name)
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("Multi30k data missing: %v (see shared/README.md)", err)
		}
		tb.Skipf("Multi30k data missing, skipping: %v", err)
	}
	return path
}

// readMulti30k reads a Multi30k split, German source and English target.
func readMulti30k(tb testing.TB, split string) []Pair {
	tb.Helper()
	pairs, stats, err := ReadParallel(multi30k(tb, split+".de.gz"), multi30k(tb, split+".en.gz"), ReadOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	if stats.Kept != stats.Read {
		tb.Fatalf("%s: %+v, want every pair kept", split, stats)
	}
	return pairs
}

// sentences returns the sources and targets of pairs in one slice.
func sentences(pairs []Pair) []string {
	out := make([]string, 0, 2*len(pairs))
	for _, p := range pairs {
		out = append(out, p.Src, p.Tgt)
	}
	return out
}

func TestMulti30k(t *testing.T) {
	train := readMulti30k(t, "train")
	if len(train) != 29000 {
		t.Fatalf("train has %d pairs, want 29000", len(train))
	}
	var all []string
	for _, split := range []string{"train", "val", "test_2016_flickr"} {
		all = append(all, sentences(readMulti30k(t, split))...)
	}

	t.Run("pretokenize round trip", func(t *testing.T) {
		for _, s := range all {
			if got := Detokenize(Pretokenize(s)); got != normalizeSpace(s) {
				t.Fatalf("Detokenize(Pretokenize(%q)) = %q", s, got)
			}
		}
	})

	start := time.Now()
	bpe, err := LearnBPE(sentences(train), 8000)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("learned %d merges in %v", len(bpe.Merges()), time.Since(start))
	if len(bpe.Merges()) != 8000 {
		t.Fatalf("learned %d merges, want 8000", len(bpe.Merges()))
	}

	t.Run("BPE round trip", func(t *testing.T) {
		for _, s := range all {
			if got := bpe.Decode(bpe.Encode(s)); got != normalizeSpace(s) {
				t.Fatalf("Decode(Encode(%q)) = %q", s, got)
			}
		}
	})

	t.Run("frequent words are single tokens", func(t *testing.T) {
		for _, w := range []string{"a", "man", "the", "ein", "Mann", "Frau", "woman", "Hund", "dog"} {
			if got := bpe.Encode(w); len(got) != 1 {
				t.Errorf("Encode(%q) = %q, want one token", w, got)
			}
		}
		counts := countPieces(sentences(train))
		pieces := make([]string, 0, len(counts))
		for p := range counts {
			pieces = append(pieces, p)
		}
		slices.SortFunc(pieces, func(a, b string) int { return cmp.Compare(counts[b], counts[a]) })
		for _, p := range pieces[:500] {
			if got := bpe.segment(p); len(got) != 1 {
				t.Errorf("piece %q (%d times) is split into %q", p, counts[p], got)
			}
		}
	})

	t.Run("merges file round trip", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "merges.txt")
		if err := bpe.WriteFile(path); err != nil {
			t.Fatal(err)
		}
		loaded, err := ReadBPEFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(loaded.Merges(), bpe.Merges()) {
			t.Fatal("loaded merges differ")
		}
	})

	t.Run("batches", func(t *testing.T) { testMulti30kBatches(t, bpe, train) })
}

// testMulti30kBatches encodes the training set and reports the batch
// shapes of a 4,096-token budget.
func testMulti30kBatches(t *testing.T, bpe *BPE, train []Pair) {
	var toks [][]string
	for _, p := range train {
		toks = append(toks, bpe.Encode(p.Src), bpe.Encode(p.Tgt))
	}
	vocab, err := BuildVocab(toks, VocabOptions{})
	if err != nil {
		t.Fatal(err)
	}
	examples := EncodePairs(BPETokenizer{BPE: bpe, Vocab: vocab}, train)
	b, err := NewBatcher(examples, BatchConfig{MaxTokens: 4096, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	longest, real, padded := 0, 0, 0
	for _, e := range examples {
		longest = max(longest, paddedLen(e))
	}
	distinct := make(map[Shape]bool)
	for range b.EpochLen() {
		batch := b.Next()
		distinct[batch.Shape()] = true
		real += batch.SrcTokens + batch.TgtTokens
		padded += len(batch.Src) + len(batch.TgtOut)
	}
	t.Logf("vocabulary %d, longest example needs %d, %d batches per epoch, %d shapes %v, %.1f%% of positions real tokens",
		vocab.Len(), longest, b.EpochLen(), len(distinct), b.Shapes(), 100*float64(real)/float64(padded))
	if bound := (longest + DefaultBucketStep - 1) / DefaultBucketStep; len(distinct) > bound {
		t.Errorf("%d shapes, more than ceil(%d/%d) = %d", len(distinct), longest, DefaultBucketStep, bound)
	}
}

func BenchmarkLearnBPE(b *testing.B) {
	corpus := sentences(readMulti30k(b, "train"))
	for b.Loop() {
		if _, err := LearnBPE(corpus, 8000); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBPEEncode(b *testing.B) {
	corpus := sentences(readMulti30k(b, "train"))
	merges, err := LearnBPE(corpus, 8000)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		bpe, _ := NewBPE(merges.Merges())
		for _, s := range corpus {
			bpe.Encode(s)
		}
	}
}
