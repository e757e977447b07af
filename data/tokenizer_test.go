package data

import (
	"slices"
	"testing"
)

func TestTokenizer(t *testing.T) {
	bpe, err := NewBPE(sennrichMerges)
	if err != nil {
		t.Fatal(err)
	}
	vocab, err := BuildVocab([][]string{bpe.Encode("lowest newer widest.")}, VocabOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tok := BPETokenizer{BPE: bpe, Vocab: vocab}
	ids := tok.Encode("newer lowest.")
	if want := vocab.Encode([]string{"▁n", "ew", "er", "▁low", "est", "."}); !slices.Equal(ids, want) {
		t.Fatalf("Encode = %v, want %v", ids, want)
	}
	low, est := vocab.ID("▁low"), vocab.ID("est")
	tests := []struct {
		ids  []int
		want string
	}{
		{ids, "newer lowest."},
		{nil, ""},
		{[]int{BOSID, low, est, EOSID, low}, "lowest"},
		{[]int{low, PadID, est, PadID}, "lowest"},
		{[]int{low, BOSID, est}, "low<s>est"},
		{[]int{low, 999, est}, "low<unk>est"},
		{[]int{EOSID, low}, ""},
	}
	for _, tt := range tests {
		if got := tok.Decode(tt.ids); got != tt.want {
			t.Errorf("Decode(%v) = %q, want %q", tt.ids, got, tt.want)
		}
	}
	if toks := tok.Tokens([]int{low, 999, PadID}); !slices.Equal(toks, []string{"▁low", UnkToken, PadToken}) || tok.Len() != vocab.Len() {
		t.Errorf("Tokens = %q, Len = %d; want the vocabulary's tokens and size %d", toks, tok.Len(), vocab.Len())
	}
	if fp := tok.Fingerprints(); fp[BPEFingerprintKey] != bpe.Fingerprint() || fp[VocabFingerprintKey] != vocab.Fingerprint() || len(fp) != 2 {
		t.Errorf("Fingerprints = %v, want the merges' and the vocabulary's", fp)
	}
	ex := EncodePairs(tok, []Pair{{"low", "newer"}, {"", "lowest"}})
	if len(ex) != 2 || !slices.Equal(ex[0].Src, tok.Encode("low")) || !slices.Equal(ex[0].Tgt, tok.Encode("newer")) ||
		len(ex[1].Src) != 0 || !slices.Equal(ex[1].Tgt, []int{low, est}) {
		t.Errorf("EncodePairs = %v", ex)
	}
}

func TestPairsFingerprint(t *testing.T) {
	a := []Pair{{Src: "ein Hund", Tgt: "a dog"}}
	b := []Pair{{Src: "ein", Tgt: "Hund a dog"}}
	seen := map[string]string{}
	for name, sets := range map[string][][]Pair{
		"a": {a}, "b": {b}, "a, b": {a, b}, "b, a": {b, a}, "a, none": {a, nil}, "none, a": {nil, a},
	} {
		fp := PairsFingerprint(sets...)
		if other, ok := seen[fp]; ok {
			t.Errorf("%s and %s have one fingerprint", name, other)
		}
		seen[fp] = name
	}
	if PairsFingerprint(a) != PairsFingerprint([]Pair{{Src: "ein Hund", Tgt: "a dog"}}) {
		t.Error("equal pairs, different fingerprints")
	}
}

// TestExamplesFingerprint: examples that differ in an id, in where a
// sequence ends or in their set have different fingerprints.
func TestExamplesFingerprint(t *testing.T) {
	a := []Example{{Src: []int{4, 5}, Tgt: []int{5, 4}}}
	b := []Example{{Src: []int{4}, Tgt: []int{5, 5, 4}}}
	c := []Example{{Src: []int{4, 5}, Tgt: []int{5, 5}}}
	seen := map[string]string{}
	for name, sets := range map[string][][]Example{
		"a": {a}, "b": {b}, "c": {c}, "a, b": {a, b}, "b, a": {b, a}, "a, none": {a, nil}, "none, a": {nil, a},
	} {
		fp := ExamplesFingerprint(sets...)
		if other, ok := seen[fp]; ok {
			t.Errorf("%s and %s have one fingerprint", name, other)
		}
		seen[fp] = name
	}
	if ExamplesFingerprint(a) != ExamplesFingerprint([]Example{{Src: []int{4, 5}, Tgt: []int{5, 4}}}) {
		t.Error("equal examples, different fingerprints")
	}
}
