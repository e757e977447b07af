package data

// Tokenizer turns text into vocabulary ids and back: BPE segments the text
// into subword tokens, which Vocab maps to ids. It is safe for concurrent
// use.
type Tokenizer struct {
	BPE   *BPE
	Vocab *Vocab
}

// Encode returns the ids of the subword tokens of sentence, without BOS or
// EOS.
func (t Tokenizer) Encode(sentence string) []int {
	return t.Vocab.Encode(t.BPE.Encode(sentence))
}

// Decode returns the text of ids, such as a model's output: a leading
// BOSID is dropped, ids from the first EOSID on are dropped, PadID is
// skipped, and an unknown id reads as UnkToken.
func (t Tokenizer) Decode(ids []int) string {
	if len(ids) > 0 && ids[0] == BOSID {
		ids = ids[1:]
	}
	toks := make([]string, 0, len(ids))
	for _, id := range ids {
		if id == EOSID {
			break
		}
		if id != PadID {
			toks = append(toks, t.Vocab.Token(id))
		}
	}
	return Detokenize(toks)
}

// EncodePairs encodes the source and target of every pair.
func (t Tokenizer) EncodePairs(pairs []Pair) []Example {
	examples := make([]Example, len(pairs))
	for i, p := range pairs {
		examples[i] = Example{Src: t.Encode(p.Src), Tgt: t.Encode(p.Tgt)}
	}
	return examples
}
