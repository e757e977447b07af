package data

// Tokenizer turns text into vocabulary ids and back. Its ids start with
// the reserved ones (PadID, BOSID, EOSID, UnkID), so that every model and
// decoder reads them alike. BPETokenizer is the project's own;
// sentencepiece.Tokenizer (package data/sentencepiece) applies a
// SentencePiece model. A Tokenizer is safe for concurrent use.
type Tokenizer interface {
	// Encode returns the ids of sentence, without BOS or EOS.
	Encode(sentence string) []int
	// Decode returns the text of ids, such as a model's output: the ids
	// TrimIDs keeps, an unknown id reading as the unknown token.
	Decode(ids []int) string
	// Tokens names each id (for display), an unknown id as the unknown
	// token.
	Tokens(ids []int) []string
	// Len is the number of ids: the vocabulary size of a model.
	Len() int
	// Fingerprints are the fingerprints of the tokenizer's files (the
	// SHA-256, in hex) by the checkpoint metadata key that records each:
	// a loader can tell a changed file, and two tokenizers with the same
	// fingerprints give every text the same ids.
	Fingerprints() map[string]string
}

// TrimIDs is the part of ids that Tokenizer.Decode reads: a leading BOSID
// is dropped, ids from the first EOSID on are dropped, and PadID is
// skipped.
func TrimIDs(ids []int) []int {
	if len(ids) > 0 && ids[0] == BOSID {
		ids = ids[1:]
	}
	out := make([]int, 0, len(ids))
	for _, id := range ids {
		if id == EOSID {
			break
		}
		if id != PadID {
			out = append(out, id)
		}
	}
	return out
}

// EncodePairs encodes the source and target of every pair with t.
func EncodePairs(t Tokenizer, pairs []Pair) []Example {
	examples := make([]Example, len(pairs))
	for i, p := range pairs {
		examples[i] = Example{Src: t.Encode(p.Src), Tgt: t.Encode(p.Tgt)}
	}
	return examples
}

// BPETokenizer is the project's Tokenizer: BPE segments the text into
// subword tokens, which Vocab maps to ids.
type BPETokenizer struct {
	BPE   *BPE
	Vocab *Vocab
}

// Encode returns the ids of the subword tokens of sentence, without BOS or
// EOS.
func (t BPETokenizer) Encode(sentence string) []int {
	return t.Vocab.Encode(t.BPE.Encode(sentence))
}

// Decode returns the text of ids, such as a model's output: the ids
// TrimIDs keeps, detokenized, an unknown id reading as UnkToken.
func (t BPETokenizer) Decode(ids []int) string {
	return Detokenize(t.Vocab.Decode(TrimIDs(ids)))
}

// Tokens returns the token of each id, UnkToken for an unknown id.
func (t BPETokenizer) Tokens(ids []int) []string { return t.Vocab.Decode(ids) }

// Len is the size of the vocabulary.
func (t BPETokenizer) Len() int { return t.Vocab.Len() }

// Fingerprints are those of the merges (BPEFingerprintKey) and of the
// vocabulary (VocabFingerprintKey).
func (t BPETokenizer) Fingerprints() map[string]string {
	return map[string]string{BPEFingerprintKey: t.BPE.Fingerprint(), VocabFingerprintKey: t.Vocab.Fingerprint()}
}
