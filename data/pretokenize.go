package data

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// SpaceMarker ("▁", U+2581) starts every piece that began a
// whitespace-separated word of the original text.
const SpaceMarker = "\u2581"

// Pretokenize splits s into pieces for BPE: each maximal run of letters,
// numbers and combining marks is one piece, and every other character that
// is not white space is a piece of its own. A piece that starts a
// whitespace-separated word, including the first word of s, gets the
// SpaceMarker prefix. For example "Ein Mann, 2 Hunde." gives
// "▁Ein", "▁Mann", ",", "▁2", "▁Hunde", ".".
//
// Detokenize undoes Pretokenize up to white space:
// Detokenize(Pretokenize(s)) equals strings.Join(strings.Fields(s), " ").
// A literal "▁" in s is a piece of its own ("▁", or "▁▁" after white
// space), which Detokenize tells apart from a marker.
func Pretokenize(s string) []string {
	var pieces []string
	wordStart := true
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			wordStart = true
			i += n
			continue
		}
		end := i + n
		if isWordRune(r) {
			end = i + wordRunLen(s[i:])
		}
		piece := s[i:end]
		if wordStart {
			piece = SpaceMarker + piece
		}
		pieces = append(pieces, piece)
		wordStart = false
		i = end
	}
	return pieces
}

// isWordRune reports whether r belongs in a run of word characters.
func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r)
}

// wordRunLen returns the byte length of the run of word characters that
// starts s.
func wordRunLen(s string) int {
	if n := strings.IndexFunc(s, func(r rune) bool { return !isWordRune(r) }); n >= 0 {
		return n
	}
	return len(s)
}

// Detokenize joins pieces from Pretokenize, or subword tokens from
// BPE.Encode, back into text: a SpaceMarker that starts a token (other than
// a token that is just "▁") becomes a space, and the leading space of the
// result is dropped.
func Detokenize(tokens []string) string {
	var b strings.Builder
	for _, tok := range tokens {
		if rest, ok := strings.CutPrefix(tok, SpaceMarker); ok && rest != "" {
			b.WriteByte(' ')
			tok = rest
		}
		b.WriteString(tok)
	}
	return strings.TrimPrefix(b.String(), " ")
}
