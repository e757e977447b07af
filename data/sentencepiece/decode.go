package sentencepiece

import (
	"strings"
	"unicode/utf8"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/data"
)

// DecodeIDs is the text of the pieces ids, as spm_decode --input_format=id
// gives it; an id out of range is an error naming it, as there.
func (m *Model) DecodeIDs(ids []int) (string, error) {
	pieces := make([]string, len(ids))
	for i, id := range ids {
		if id < 0 || id >= len(m.pieces) {
			return "", errors.Errorf("id %d (at %d) is out of range: the model has %d pieces", id, i, len(m.pieces))
		}
		pieces[i] = m.pieces[id].text
	}
	return m.Decode(pieces), nil
}

// Decode is the text of pieces, as spm_decode gives it: a control piece
// is nothing, the unknown piece is the trainer spec's unk_surface (" ⁇ ")
// and any other text that is not a piece is itself, runs of byte pieces
// are the UTF-8 they spell (U+FFFD for each byte that starts no valid
// character), data.SpaceMarker is a space, and the space marker that starts
// the text is dropped (where the model adds a dummy prefix or removes
// extra white space); then the model's denormalization rules, if it has
// any, apply.
func (m *Model) Decode(pieces []string) string {
	var b strings.Builder
	bytesFrom := 0
	leading, dropped := true, false
	for i, p := range pieces {
		id := m.ID(p)
		if m.pieces[id].typ == bytePiece {
			continue
		}
		writeBytes(&b, pieces[bytesFrom:i])
		bytesFrom = i + 1
		leading = leading && !dropped && b.Len() == 0
		var text string
		text, dropped = m.decodePiece(p, id, leading)
		b.WriteString(text)
	}
	writeBytes(&b, pieces[bytesFrom:])
	if m.denorm != nil {
		return m.denorm.normalize(b.String())
	}
	return b.String()
}

// decodePiece is the text of piece p, whose id is id, and whether it
// dropped the space marker that starts the text; leading says that no
// text came before (SentencePiece's DecodeSentencePiece).
func (m *Model) decodePiece(p string, id int, leading bool) (string, bool) {
	switch m.pieces[id].typ {
	case controlPiece:
		return "", false
	case unknownPiece:
		if p == m.pieces[id].text {
			return m.unkSurface, false
		}
		return p, false
	}
	dropped := false
	if leading && (m.addDummyPrefix || m.removeWS) {
		p, dropped = strings.CutPrefix(p, data.SpaceMarker)
		// Removing extra white space, it drops every leading marker.
		dropped = dropped && !m.removeWS
	}
	return strings.ReplaceAll(p, data.SpaceMarker, " "), dropped
}

// writeBytes writes the UTF-8 that byte pieces spell, a U+FFFD for each
// byte that starts no valid character.
func writeBytes(b *strings.Builder, pieces []string) {
	var raw []byte
	for _, p := range pieces {
		c, _ := pieceByte(p)
		raw = append(raw, c)
	}
	for len(raw) > 0 {
		r, n := utf8.DecodeRune(raw)
		if r == utf8.RuneError && n == 1 {
			b.WriteString("\uFFFD")
		} else {
			b.Write(raw[:n])
		}
		raw = raw[n:]
	}
}
