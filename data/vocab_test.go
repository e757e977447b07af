package data

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// vocabTokens returns the tokens of v after the reserved ones.
func vocabTokens(v *Vocab) []string {
	var toks []string
	for id := NumReserved; id < v.Len(); id++ {
		toks = append(toks, v.Token(id))
	}
	return toks
}

func TestBuildVocab(t *testing.T) {
	seqs := [][]string{
		{"b", "a", "c", "a"},
		{"c", "d", "a", "<unk>", "</s>"},
		{"b", "e"},
	}
	// Counts: a 3, b 2, c 2, d 1, e 1; reserved strings are not counted.
	tests := []struct {
		opt  VocabOptions
		want []string
	}{
		{VocabOptions{}, []string{"a", "b", "c", "d", "e"}},
		{VocabOptions{MinCount: 2}, []string{"a", "b", "c"}},
		{VocabOptions{MinCount: 4}, nil},
		{VocabOptions{MaxSize: NumReserved + 2}, []string{"a", "b"}},
		{VocabOptions{MaxSize: NumReserved}, nil},
		{VocabOptions{MinCount: 2, MaxSize: 100}, []string{"a", "b", "c"}},
	}
	for _, tt := range tests {
		v, err := BuildVocab(seqs, tt.opt)
		if err != nil {
			t.Fatalf("%+v: %v", tt.opt, err)
		}
		if got := vocabTokens(v); !slices.Equal(got, tt.want) {
			t.Errorf("%+v: tokens %q, want %q", tt.opt, got, tt.want)
		}
		if v.Len() != NumReserved+len(tt.want) {
			t.Errorf("%+v: Len %d, want %d", tt.opt, v.Len(), NumReserved+len(tt.want))
		}
	}
}

func TestBuildVocabOrderIndependent(t *testing.T) {
	seqs := [][]string{{"x", "y", "z"}, {"z", "y"}, {"w"}}
	a, _ := BuildVocab(seqs, VocabOptions{})
	slices.Reverse(seqs)
	for _, s := range seqs {
		slices.Reverse(s)
	}
	b, _ := BuildVocab(seqs, VocabOptions{})
	if !slices.Equal(vocabTokens(a), vocabTokens(b)) {
		t.Errorf("token order depends on input order: %q vs %q", vocabTokens(a), vocabTokens(b))
	}
}

func TestBuildVocabErrors(t *testing.T) {
	tests := []struct {
		seqs [][]string
		opt  VocabOptions
		want string
	}{
		{[][]string{{"a"}}, VocabOptions{MaxSize: 2}, "MaxSize 2"},
		{[][]string{{"a"}, {"b", ""}}, VocabOptions{}, "sequence 1: empty token"},
		{[][]string{{"a\nb"}}, VocabOptions{}, "line break"},
		{[][]string{{"a\rb"}}, VocabOptions{}, "line break"},
		{[][]string{{"\xff"}}, VocabOptions{}, "not valid UTF-8"},
	}
	for _, tt := range tests {
		_, err := BuildVocab(tt.seqs, tt.opt)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("BuildVocab(%q, %+v) error %v, want %q", tt.seqs, tt.opt, err, tt.want)
		}
	}
}

func TestVocabLookup(t *testing.T) {
	v, err := BuildVocab([][]string{{"▁Mann", "▁ein", "▁Mann"}}, VocabOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ids := []struct {
		tok string
		id  int
	}{
		{PadToken, PadID}, {BOSToken, BOSID}, {EOSToken, EOSID}, {UnkToken, UnkID},
		{"▁Mann", NumReserved}, {"▁ein", NumReserved + 1}, {"▁Frau", UnkID},
	}
	for _, tt := range ids {
		if got := v.ID(tt.tok); got != tt.id {
			t.Errorf("ID(%q) = %d, want %d", tt.tok, got, tt.id)
		}
	}
	for _, id := range []int{-1, v.Len(), 1 << 40} {
		if got := v.Token(id); got != UnkToken {
			t.Errorf("Token(%d) = %q, want %q", id, got, UnkToken)
		}
	}
	toks := []string{"▁ein", "▁Frau", "▁Mann", "</s>"}
	enc := v.Encode(toks)
	if want := []int{5, UnkID, 4, EOSID}; !slices.Equal(enc, want) {
		t.Errorf("Encode = %v, want %v", enc, want)
	}
	if dec := v.Decode(enc); !slices.Equal(dec, []string{"▁ein", UnkToken, "▁Mann", EOSToken}) {
		t.Errorf("Decode = %q", dec)
	}
}

func TestReservedToken(t *testing.T) {
	for id, want := range map[int]string{PadID: PadToken, BOSID: BOSToken, EOSID: EOSToken, UnkID: UnkToken} {
		if got := ReservedToken(id); got != want {
			t.Errorf("ReservedToken(%d) = %q, want %q", id, got, want)
		}
	}
}

func TestVocabFileRoundTrip(t *testing.T) {
	v, err := BuildVocab([][]string{{"▁Größe", "\t", "ß", "▁", "x y", "#"}}, VocabOptions{})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "vocab.txt")
	if err := os.WriteFile(path, []byte("old contents\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := v.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n"); !slices.Equal(lines[:NumReserved], reservedTokens[:]) || len(lines) != v.Len() {
		t.Errorf("file lines %q: want reserved tokens first and %d lines", lines, v.Len())
	}
	loaded, err := ReadVocabFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if loaded.Len() != v.Len() || !slices.Equal(vocabTokens(loaded), vocabTokens(v)) {
		t.Errorf("loaded %q, want %q", vocabTokens(loaded), vocabTokens(v))
	}
	for id := range v.Len() {
		if loaded.ID(v.Token(id)) != id {
			t.Errorf("loaded ID(%q) = %d, want %d", v.Token(id), loaded.ID(v.Token(id)), id)
		}
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("directory holds %d files after WriteFile, want 1 (no temporary file left)", len(entries))
	}
}

func TestWriteFileAtomicFailure(t *testing.T) {
	v, _ := BuildVocab(nil, VocabOptions{})
	if err := v.WriteFile(filepath.Join(t.TempDir(), "no-such-dir", "vocab.txt")); err == nil {
		t.Error("WriteFile into a missing directory: no error")
	}
}

func TestReadVocabFile(t *testing.T) {
	tests := []struct {
		file string
		want string // error substring; empty means success
	}{
		{"good.vocab", ""},
		{"duplicate.vocab", "testdata/duplicate.vocab:7: duplicate token \"▁a\" (first on line 5)"},
		{"misordered.vocab", "testdata/misordered.vocab:3: want reserved token \"</s>\", got \"<unk>\""},
		{"short.vocab", "testdata/short.vocab:3: missing reserved token \"</s>\""},
		{"badutf8.vocab", "testdata/badutf8.vocab:6: invalid UTF-8"},
		{"empty.vocab", "testdata/empty.vocab:6: empty token"},
		{"reserved_again.vocab", "testdata/reserved_again.vocab:6: duplicate token \"<s>\" (first on line 2)"},
		{"missing.vocab", "open testdata/missing.vocab"},
	}
	for _, tt := range tests {
		v, err := ReadVocabFile(filepath.Join("testdata", tt.file))
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.file, err)
		case tt.want == "" && !slices.Equal(vocabTokens(v), []string{"▁a", "▁man", "."}):
			t.Errorf("%s: tokens %q", tt.file, vocabTokens(v))
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: error %v, want %q", tt.file, err, tt.want)
		}
	}
}
