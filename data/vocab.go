package data

import (
	"cmp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/pkg/errors"
)

// Reserved token ids. Every Vocab starts with these four tokens in this order.
const (
	PadID = 0 // PadID fills positions after the end of a sequence.
	BOSID = 1 // BOSID starts every decoder input.
	EOSID = 2 // EOSID ends every source and every decoder target.
	UnkID = 3 // UnkID stands for any token missing from the vocabulary.
)

// Reserved token strings, at ids PadID, BOSID, EOSID and UnkID.
const (
	PadToken = "<pad>"
	BOSToken = "<s>"
	EOSToken = "</s>"
	UnkToken = "<unk>"
)

// NumReserved is the number of reserved ids; ordinary tokens start at this id.
const NumReserved = 4

// reservedTokens lists the reserved tokens in id order.
var reservedTokens = [NumReserved]string{PadToken, BOSToken, EOSToken, UnkToken}

// ReservedToken is the token of the reserved id id: PadToken for PadID,
// BOSToken for BOSID, EOSToken for EOSID, UnkToken for UnkID. It panics
// for an id that is not reserved (outside [0, NumReserved)).
func ReservedToken(id int) string { return reservedTokens[id] }

// Vocab maps tokens to dense integer ids and back. A Vocab is immutable and
// safe for concurrent use.
type Vocab struct {
	tokens []string
	ids    map[string]int
}

// VocabOptions limits which tokens BuildVocab keeps.
type VocabOptions struct {
	// MinCount drops tokens seen fewer times; 0 and 1 keep every token.
	MinCount int
	// MaxSize, when positive, caps Len (reserved tokens included) by
	// keeping only the most frequent tokens. It must be at least NumReserved.
	MaxSize int
}

// BuildVocab counts the tokens of seqs and returns a vocabulary holding the
// reserved tokens followed by the counted tokens ordered by decreasing count,
// ties broken by byte-wise lexicographic order, so the result does not
// depend on the order of seqs. Occurrences of reserved token strings are
// not counted. A token must be non-empty valid UTF-8 without "\n" or "\r".
func BuildVocab(seqs [][]string, opt VocabOptions) (*Vocab, error) {
	if opt.MaxSize != 0 && opt.MaxSize < NumReserved {
		return nil, errors.Errorf("vocabulary MaxSize %d is below the %d reserved tokens", opt.MaxSize, NumReserved)
	}
	counts := make(map[string]int)
	for i, seq := range seqs {
		for _, tok := range seq {
			if err := checkToken(tok); err != nil {
				return nil, errors.Wrapf(err, "sequence %d", i)
			}
			counts[tok]++
		}
	}
	for _, r := range reservedTokens {
		delete(counts, r)
	}
	return newVocab(rankTokens(counts, opt)), nil
}

// rankTokens orders the tokens of counts for BuildVocab and applies opt.
func rankTokens(counts map[string]int, opt VocabOptions) []string {
	toks := make([]string, 0, len(counts))
	for tok, n := range counts {
		if n >= opt.MinCount {
			toks = append(toks, tok)
		}
	}
	slices.SortFunc(toks, func(a, b string) int {
		return cmp.Or(cmp.Compare(counts[b], counts[a]), strings.Compare(a, b))
	})
	if opt.MaxSize > 0 && len(toks) > opt.MaxSize-NumReserved {
		toks = toks[:opt.MaxSize-NumReserved]
	}
	return toks
}

// newVocab returns the vocabulary of the reserved tokens followed by toks,
// which must be distinct, valid and not reserved.
func newVocab(toks []string) *Vocab {
	v := &Vocab{
		tokens: append(reservedTokens[:], toks...),
		ids:    make(map[string]int, NumReserved+len(toks)),
	}
	for id, tok := range v.tokens {
		v.ids[tok] = id
	}
	return v
}

// checkToken reports whether tok can be stored as a line of a vocabulary file.
func checkToken(tok string) error {
	switch {
	case tok == "":
		return errors.New("empty token")
	case strings.ContainsAny(tok, "\r\n"):
		return errors.Errorf("token %q contains a line break", tok)
	case !utf8.ValidString(tok):
		return errors.Errorf("token %q is not valid UTF-8", tok)
	}
	return nil
}

// Len returns the number of ids, reserved ones included.
func (v *Vocab) Len() int { return len(v.tokens) }

// ID returns the id of tok, or UnkID if tok is not in the vocabulary.
func (v *Vocab) ID(tok string) int {
	if id, ok := v.ids[tok]; ok {
		return id
	}
	return UnkID
}

// Token returns the token with the given id, or UnkToken if id is out of range.
func (v *Vocab) Token(id int) string {
	if id < 0 || id >= len(v.tokens) {
		return UnkToken
	}
	return v.tokens[id]
}

// Encode maps tokens to ids, unknown tokens to UnkID.
func (v *Vocab) Encode(tokens []string) []int {
	ids := make([]int, len(tokens))
	for i, tok := range tokens {
		ids[i] = v.ID(tok)
	}
	return ids
}

// Decode maps ids to tokens, reserved ids included, ids out of range to UnkToken.
func (v *Vocab) Decode(ids []int) []string {
	toks := make([]string, len(ids))
	for i, id := range ids {
		toks[i] = v.Token(id)
	}
	return toks
}
