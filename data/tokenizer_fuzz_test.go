package data

import (
	"os"
	"path/filepath"
	"testing"
)

// seedFiles adds the contents of testdata files with the given suffix.
func seedFiles(f *testing.F, suffix string) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "*"+suffix))
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}

// FuzzReadBPEFile reads arbitrary bytes as a merges file: an error, or
// merges that survive a write and read unchanged.
func FuzzReadBPEFile(f *testing.F) {
	seedFiles(f, ".merges")
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, "bpe.txt")
		os.WriteFile(path, data, 0o644)
		b, err := ReadBPEFile(path)
		if err != nil {
			return
		}
		again := filepath.Join(dir, "again.txt")
		if err := b.WriteFile(again); err != nil {
			t.Fatal(err)
		}
		b2, err := ReadBPEFile(again)
		if err != nil || b2.Fingerprint() != b.Fingerprint() {
			t.Fatalf("merges do not round-trip: %v", err)
		}
		b.Encode("ein Hund läuft")
	})
}

// FuzzReadVocabFile reads arbitrary bytes as a vocabulary: an error, or a
// vocabulary whose ids and tokens map one to one.
func FuzzReadVocabFile(f *testing.F) {
	seedFiles(f, ".vocab")
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "vocab.txt")
		os.WriteFile(path, data, 0o644)
		v, err := ReadVocabFile(path)
		if err != nil {
			return
		}
		for id := range v.Len() {
			if v.ID(v.Token(id)) != id {
				t.Fatalf("token %q of id %d maps to id %d", v.Token(id), id, v.ID(v.Token(id)))
			}
		}
	})
}
