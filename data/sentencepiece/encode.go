package sentencepiece

import (
	"fmt"
	"strconv"
	"strings"
)

// Token is one piece of an encoded text: its text and its id.
type Token struct {
	Piece string
	ID    int
}

// segment is a piece of normalized text as a model splits it, and its id.
type segment struct {
	text string
	id   int
}

// Encode splits text into the model's pieces, as spm_encode does: it
// normalizes the text, segments it (unigram or bpe), joins runs of
// unknown pieces into one, and without byte fallback leaves an unknown
// piece as the text it stands for, or with byte fallback spells it in
// byte pieces.
func (m *Model) Encode(text string) []Token {
	norm := m.norm.normalize(text)
	if norm == "" {
		return nil
	}
	var segs []segment
	if m.typ == Unigram {
		segs = m.viterbi(norm)
	} else {
		segs = m.mergeBPE(norm)
	}
	return m.tokens(segs)
}

// Pieces is the text of Encode's tokens (spm_encode --output_format=piece).
func (m *Model) Pieces(text string) []string {
	toks := m.Encode(text)
	out := make([]string, len(toks))
	for i, t := range toks {
		out[i] = t.Piece
	}
	return out
}

// IDs is the ids of Encode's tokens (spm_encode --output_format=id).
func (m *Model) IDs(text string) []int {
	toks := m.Encode(text)
	out := make([]int, len(toks))
	for i, t := range toks {
		out[i] = t.ID
	}
	return out
}

// tokens turns the segments of a text into tokens, as SentencePiece's
// PopulateSentencePieceText does.
func (m *Model) tokens(segs []segment) []Token {
	out := make([]Token, 0, len(segs))
	prevUnk := false
	for _, s := range segs {
		unk := m.pieces[s.id].typ == unknownPiece
		switch {
		case unk && m.byteFallback:
			for i := 0; i < len(s.text); i++ {
				p := bytePieceText(s.text[i])
				out = append(out, Token{p, m.ID(p)})
			}
		case unk && prevUnk:
			out[len(out)-1].Piece += s.text
		default:
			out = append(out, Token{s.text, s.id})
		}
		prevUnk = unk
	}
	return out
}

// bytePieceText is the text of the byte piece of b, "<0xXX>".
func bytePieceText(b byte) string { return fmt.Sprintf("<0x%02X>", b) }

// pieceByte is the byte of a byte piece's text, if it is one.
func pieceByte(text string) (byte, bool) {
	if len(text) != 6 || !strings.HasPrefix(text, "<0x") || text[5] != '>' {
		return 0, false
	}
	b, err := strconv.ParseUint(text[3:5], 16, 8)
	return byte(b), err == nil && bytePieceText(byte(b)) == text
}
