package data

import (
	"bufio"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/internal/atomicfile"
)

// WriteFile saves v atomically as text: one token per line, the token on
// line n having id n-1.
func (v *Vocab) WriteFile(path string) error {
	return atomicfile.Write(path, v.encode)
}

// encode writes the file's text to w.
func (v *Vocab) encode(w *bufio.Writer) error {
	for _, tok := range v.tokens {
		w.WriteString(tok)
		if err := w.WriteByte('\n'); err != nil {
			return err
		}
	}
	return nil
}

// Fingerprint is the SHA-256 of the text WriteFile writes, in hex: a
// checkpoint records it so that a loader can tell a changed file.
func (v *Vocab) Fingerprint() string {
	return fingerprint(v.encode)
}

// MaxFileLines bounds the lines of a vocabulary or merges file (16.7M,
// the largest vocabulary a model takes), so that reading one takes bounded
// memory.
const MaxFileLines = 1 << 24

// ReadVocabFile loads a vocabulary saved by WriteFile (optionally
// gzip-compressed). The first lines must be the reserved tokens in id order,
// and every token must be distinct; errors name the file and line. A file
// of more than MaxFileLines lines is refused.
func ReadVocabFile(path string) (*Vocab, error) {
	var toks []string
	seen := make(map[string]int) // token -> line
	lines := 0
	err := ReadLines(path, func(tok string, n int) error {
		lines = n
		if n > MaxFileLines {
			return errors.Errorf("%s:%d: more than %d tokens", path, n, MaxFileLines)
		}
		if n <= NumReserved && tok != reservedTokens[n-1] {
			return errors.Errorf("%s:%d: want reserved token %q, got %q", path, n, reservedTokens[n-1], tok)
		}
		if err := checkToken(tok); err != nil {
			return errors.Wrapf(err, "%s:%d", path, n)
		}
		if first, ok := seen[tok]; ok {
			return errors.Errorf("%s:%d: duplicate token %q (first on line %d)", path, n, tok, first)
		}
		seen[tok] = n
		if n > NumReserved {
			toks = append(toks, tok)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if lines < NumReserved {
		return nil, errors.Errorf("%s:%d: missing reserved token %q", path, lines+1, reservedTokens[lines])
	}
	return newVocab(toks), nil
}
