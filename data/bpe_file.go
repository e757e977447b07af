package data

import (
	"bufio"
	"strings"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/internal/atomicfile"
)

// WriteFile saves the merges of b atomically as text, one merge per line in
// the order they are applied, the two symbols separated by one space.
func (b *BPE) WriteFile(path string) error {
	return atomicfile.Write(path, b.encode)
}

// encode writes the file's text to w.
func (b *BPE) encode(w *bufio.Writer) error {
	for _, m := range b.merges {
		w.WriteString(m.Left)
		w.WriteByte(' ')
		w.WriteString(m.Right)
		if err := w.WriteByte('\n'); err != nil {
			return err
		}
	}
	return nil
}

// Fingerprint is the SHA-256 of the text WriteFile writes, in hex: a
// checkpoint records it so that a loader can tell a changed file.
func (b *BPE) Fingerprint() string {
	return fingerprint(b.encode)
}

// ReadBPEFile loads merges saved by WriteFile (optionally gzip-compressed).
// Errors name the file and line; see NewBPE for what makes a merge valid.
// A file of more than MaxFileLines lines is refused.
func ReadBPEFile(path string) (*BPE, error) {
	var merges []Merge
	err := ReadLines(path, func(line string, n int) error {
		if n > MaxFileLines {
			return errors.Errorf("%s:%d: more than %d merges", path, n, MaxFileLines)
		}
		left, right, ok := strings.Cut(line, " ")
		if !ok || left == "" || right == "" || strings.Contains(right, " ") {
			return errors.Errorf("%s:%d: want two symbols separated by one space, got %q", path, n, line)
		}
		merges = append(merges, Merge{left, right})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if i, err := checkMerges(merges); err != nil {
		return nil, errors.Wrapf(err, "%s:%d", path, i+1)
	}
	return newBPE(merges), nil
}
