package data

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// The metadata keys under which a checkpoint records the fingerprints of
// its tokenizer's files and its data, and what the data held.
const (
	BPEFingerprintKey   = "bpe_sha256"
	VocabFingerprintKey = "vocab_sha256"
	// DataFingerprintKey records the fingerprint of the data a run trains
	// and validates on (PairsFingerprint of files, ExamplesFingerprint of
	// a synthetic task's), so that a resume on data that changed since is
	// refused.
	DataFingerprintKey = "data_sha256"
	// LongestSourceKey records the most tokens of a source the run
	// trained on, its EOS included (of a sentence, for a language model of
	// text), in decimal, so that translating a longer one can be warned of.
	LongestSourceKey = "longest_source"
)

// PairsFingerprint is the SHA-256, in hex, of the pairs of the given sets
// in order: the fingerprint of a run's data.
func PairsFingerprint(sets ...[]Pair) string {
	return fingerprint(func(w *bufio.Writer) error {
		for i, set := range sets {
			fmt.Fprintf(w, "set %d: %d pairs\n", i, len(set))
			for _, p := range set {
				fmt.Fprintf(w, "%d %s\x00%d %s\n", len(p.Src), p.Src, len(p.Tgt), p.Tgt)
			}
		}
		return nil
	})
}

// ExamplesFingerprint is the SHA-256, in hex, of the token ids of the
// examples of the given sets in order: the fingerprint of a synthetic
// task's data, which its settings make.
func ExamplesFingerprint(sets ...[]Example) string {
	return fingerprint(func(w *bufio.Writer) error {
		for i, set := range sets {
			fmt.Fprintf(w, "set %d: %d examples\n", i, len(set))
			for _, e := range set {
				fmt.Fprintf(w, "%s\x00%s\n", FormatIDs(e.Src), FormatIDs(e.Tgt))
			}
		}
		return nil
	})
}

// fingerprint is the SHA-256, in hex, of what encode writes.
func fingerprint(encode func(w *bufio.Writer) error) string {
	h := sha256.New()
	w := bufio.NewWriter(h)
	encode(w) // writing to a hash cannot fail
	w.Flush()
	return hex.EncodeToString(h.Sum(nil))
}
