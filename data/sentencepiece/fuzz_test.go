package sentencepiece

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// FuzzParse reads arbitrary bytes as a model file: an error, or a model
// that encodes a text into pieces that are its own (or, unknown, the text
// they stand for) and whose ids decode without error, the same each time.
func FuzzParse(f *testing.F) {
	for _, name := range testModels {
		raw, err := os.ReadFile(filepath.Join("testdata", name+".model"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw, "A man in a blue shirt ☃ <sep> \u00a0ﬁ \xff\x00")
	}
	f.Fuzz(func(t *testing.T, raw []byte, text string) {
		m, err := Parse(raw)
		if err != nil {
			return
		}
		toks := m.Encode(text)
		for _, tok := range toks {
			if tok.ID < 0 || tok.ID >= m.Len() || tok.Piece != m.Piece(tok.ID) && tok.ID != m.UnknownID() {
				t.Fatalf("%q: token %+v is no piece of the model", text, tok)
			}
		}
		if _, err := m.DecodeIDs(m.IDs(text)); err != nil {
			t.Fatal(err)
		}
		if again := m.Encode(text); !slices.Equal(again, toks) {
			t.Fatalf("%q encodes as %v, then as %v", text, toks, again)
		}
		tok := NewTokenizer(m)
		for _, id := range tok.Encode(text) {
			if id < 0 || id >= tok.Len() {
				t.Fatalf("%q: id %d of %d", text, id, tok.Len())
			}
		}
		tok.Decode(tok.Encode(strings.ToUpper(text)))
	})
}
