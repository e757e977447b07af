package data

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
)

// The metadata keys under which a checkpoint records the fingerprints of
// its tokenizer's files.
const (
	BPEFingerprintKey   = "bpe_sha256"
	VocabFingerprintKey = "vocab_sha256"
)

// fingerprint is the SHA-256, in hex, of what encode writes.
func fingerprint(encode func(w *bufio.Writer) error) string {
	h := sha256.New()
	w := bufio.NewWriter(h)
	encode(w) // writing to a hash cannot fail
	w.Flush()
	return hex.EncodeToString(h.Sum(nil))
}
