package sentencepiece

import (
	"slices"
	"strings"
	"testing"

	"github.com/transformer-go/transformer/data"
)

// TestTokenizerIDs checks the tokenizer's renumbering: the reserved ids
// are the model's special pieces, the other pieces follow in order.
func TestTokenizerIDs(t *testing.T) {
	tests := []struct {
		model string
		// shift is how far a piece's id moves; reserved maps the
		// reserved ids to the model's pieces (-1: none).
		shift    int
		reserved [data.NumReserved]int
	}{
		{"unigram", 1, [data.NumReserved]int{-1, 1, 2, 0}}, // <unk> 0, <s> 1, </s> 2
		{"suffix", 1, [data.NumReserved]int{2, -1, 1, 0}},  // <unk> 0, </s> 1, <pad> 2
	}
	for _, tt := range tests {
		m := loadTest(t, tt.model)
		tk := NewTokenizer(m)
		var tok data.Tokenizer = tk
		if tok.Len() != m.Len()+1 {
			t.Errorf("%s: Len %d, want the model's %d pieces and the one reserved id it lacks", tt.model, tok.Len(), m.Len())
		}
		for id, piece := range tt.reserved {
			if got := tk.piece(id); piece >= 0 && got != piece || piece < 0 && got != m.UnknownID() {
				t.Errorf("%s: reserved id %d is piece %d, want %d", tt.model, id, got, piece)
			}
		}
		text := "A man in a blue shirt, ☃ <sep> @@ 漢字 naïve"
		ids, pieces := tok.Encode(text), m.IDs(text)
		for i, p := range pieces {
			if want := p + tt.shift; p == m.UnknownID() && ids[i] != data.UnkID || p != m.UnknownID() && ids[i] != want {
				t.Fatalf("%s: %q: piece %d (%q) has id %d", tt.model, text, p, m.Piece(p), ids[i])
			}
		}
		if got := tok.Tokens(ids); !slices.Equal(got, m.Pieces(text)) {
			t.Errorf("%s: Tokens = %q, want the pieces %q", tt.model, got, m.Pieces(text))
		}
	}
}

// TestTokenizerDecode checks that the tokenizer decodes what it encodes as
// the model does, after the ids data.TrimIDs drops, and reads an id out
// of range as the unknown piece.
func TestTokenizerDecode(t *testing.T) {
	for _, name := range testModels {
		m := loadTest(t, name)
		tok := NewTokenizer(m)
		for _, text := range readLines(t, "testdata/tricky.txt") {
			want, err := m.DecodeIDs(m.IDs(text))
			if err != nil {
				t.Fatal(err)
			}
			ids := tok.Encode(text)
			framed := slices.Concat([]int{data.BOSID}, ids, []int{data.EOSID}, ids)
			if got := tok.Decode(framed); got != want {
				t.Fatalf("%s: Decode(BOS, Encode(%q), EOS, ...) = %q, want %q", name, text, got, want)
			}
		}
		unk, err := m.DecodeIDs([]int{m.UnknownID()})
		if err != nil {
			t.Fatal(err)
		}
		if got := tok.Decode([]int{tok.Len(), -1, data.PadID}); got != strings.Repeat(unk, 2) {
			t.Errorf("%s: ids out of range decode as %q, want the unknown piece's %q twice", name, got, unk)
		}
	}
}

// TestTokenizerTokens checks the names of reserved ids the model has no
// piece for, and the fingerprint.
func TestTokenizerTokens(t *testing.T) {
	m := loadTest(t, "unigram")
	tok := NewTokenizer(m)
	got := tok.Tokens([]int{data.PadID, data.BOSID, data.EOSID, data.UnkID, tok.Len()})
	if want := []string{data.PadToken, "<s>", "</s>", "<unk>", "<unk>"}; !slices.Equal(got, want) {
		t.Errorf("Tokens = %q, want %q", got, want)
	}
	if fp := tok.Fingerprints(); len(fp) != 1 || fp[FingerprintKey] != m.Fingerprint() {
		t.Errorf("Fingerprints = %v, want the model file's under %s", fp, FingerprintKey)
	}
}
