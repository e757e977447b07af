package sentencepiece

import (
	"slices"

	"github.com/transformer-go/transformer/data"
)

// FingerprintKey is the checkpoint metadata key under which a run on a
// SentencePiece model records the fingerprint of its .model file.
const FingerprintKey = "spm_sha256"

// Tokenizer is the data.Tokenizer of a SentencePiece model. Its ids are
// the model's pieces renumbered so that the reserved ids come first:
// data.UnkID is the model's unknown piece, data.BOSID, EOSID and PadID
// its start, end and padding pieces (its trainer spec's bos_piece,
// eos_piece and pad_piece, where they are control pieces; ids the model
// has no piece for otherwise), and the other pieces follow in the model's
// order. With spm_train's defaults (<unk> 0, <s> 1, </s> 2, no padding)
// piece i ≥ 3 is id i+1, and the vocabulary holds one id more than the
// model; a model trained with --pad_id=0 --bos_id=1 --eos_id=2
// --unk_id=3 keeps its ids. A Tokenizer is safe for concurrent use.
type Tokenizer struct {
	m *Model
	// ids maps the model's pieces to ids, pieces ids to pieces (-1 for a
	// reserved id the model has no piece for).
	ids, pieces []int
}

// NewTokenizer is the Tokenizer of m.
func NewTokenizer(m *Model) *Tokenizer {
	t := &Tokenizer{m: m, ids: make([]int, m.Len()), pieces: slices.Repeat([]int{-1}, data.NumReserved)}
	for p := range t.ids {
		t.ids[p] = -1
	}
	for _, r := range []struct{ id, piece int }{
		{data.UnkID, m.unk}, {data.BOSID, m.roles.bos}, {data.EOSID, m.roles.eos}, {data.PadID, m.roles.pad},
	} {
		if r.piece >= 0 && t.ids[r.piece] < 0 { // a piece of two roles keeps the first
			t.ids[r.piece], t.pieces[r.id] = r.id, r.piece
		}
	}
	for p, id := range t.ids {
		if id < 0 {
			t.ids[p] = len(t.pieces)
			t.pieces = append(t.pieces, p)
		}
	}
	return t
}

// LoadTokenizer is the Tokenizer of the model file at path (Load).
func LoadTokenizer(path string) (*Tokenizer, error) {
	m, err := Load(path)
	if err != nil {
		return nil, err
	}
	return NewTokenizer(m), nil
}

// Model is the tokenizer's SentencePiece model.
func (t *Tokenizer) Model() *Model { return t.m }

// Encode returns the ids of the pieces of sentence (Model.Encode), without
// BOS or EOS.
func (t *Tokenizer) Encode(sentence string) []int {
	ids := t.m.IDs(sentence)
	for i, p := range ids {
		ids[i] = t.ids[p]
	}
	return ids
}

// Decode returns the text of ids, such as a model's output, as
// Model.Decode gives it: the ids data.TrimIDs keeps, an id that is no
// piece's reading as the unknown piece.
func (t *Tokenizer) Decode(ids []int) string {
	ids = data.TrimIDs(ids)
	pieces := make([]string, len(ids))
	for i, id := range ids {
		pieces[i] = t.m.pieces[t.piece(id)].text
	}
	return t.m.Decode(pieces)
}

// piece is the model's piece of id, its unknown piece for an id that is
// no piece's.
func (t *Tokenizer) piece(id int) int {
	if id < 0 || id >= len(t.pieces) || t.pieces[id] < 0 {
		return t.m.unk
	}
	return t.pieces[id]
}

// Tokens returns the piece of each id; a reserved id the model has no
// piece for is the reserved token (data.PadToken, BOSToken, EOSToken),
// and an id out of range the unknown piece.
func (t *Tokenizer) Tokens(ids []int) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		if id >= 0 && id < data.NumReserved && t.pieces[id] < 0 {
			out[i] = data.ReservedToken(id)
			continue
		}
		out[i] = t.m.pieces[t.piece(id)].text
	}
	return out
}

// Len is the number of ids: the model's pieces and the reserved ids it
// has no piece for.
func (t *Tokenizer) Len() int { return len(t.pieces) }

// Fingerprints is the fingerprint of the model file (FingerprintKey).
func (t *Tokenizer) Fingerprints() map[string]string {
	return map[string]string{FingerprintKey: t.m.Fingerprint()}
}
