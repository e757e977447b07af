package sentencepiece

import (
	"strings"
	"unicode/utf8"

	"github.com/transformer-go/transformer/data"
	"github.com/transformer-go/transformer/data/sentencepiece/internal/modelpb"
)

// normalizer is SentencePiece's Normalizer: the rules of a charsmap,
// user-defined symbols kept as they are, and the white-space rules of a
// NormalizerSpec.
type normalizer struct {
	rules *charsmap // nil: none (the identity)
	user  prefixes  // user-defined symbols, never normalized
	// addDummyPrefix puts a space before the text (after it, with
	// suffix); removeExtra drops leading, trailing and repeated spaces;
	// escape writes spaces as data.SpaceMarker.
	addDummyPrefix, removeExtra, escape, suffix bool
}

// newNormalizer is the normalizer of spec, keeping the user-defined
// symbols of user, and putting the dummy space after the text if suffix
// (TrainerSpec.treat_whitespace_as_suffix).
func newNormalizer(spec *modelpb.NormalizerSpec, user prefixes, suffix bool) (*normalizer, error) {
	n := &normalizer{user: user, addDummyPrefix: spec.GetAddDummyPrefix(), removeExtra: spec.GetRemoveExtraWhitespaces(),
		escape: spec.GetEscapeWhitespaces(), suffix: suffix}
	if blob := spec.GetPrecompiledCharsmap(); len(blob) > 0 {
		var err error
		if n.rules, err = parseCharsmap(blob); err != nil {
			return nil, err
		}
	}
	return n, nil
}

// space is what stands for a space in normalized text: data.SpaceMarker
// ("▁"), where the spec escapes white space (the default).
func (n *normalizer) space() string {
	if n.escape {
		return data.SpaceMarker
	}
	return " "
}

// normalize is SentencePiece's Normalizer::Normalize.
func (n *normalizer) normalize(in string) string {
	if n.removeExtra {
		for in != "" {
			p, l := n.prefix(in)
			if p != " " {
				break
			}
			in = in[l:]
		}
	}
	if in == "" {
		return ""
	}
	var b strings.Builder
	if n.addDummyPrefix && !n.suffix {
		b.WriteString(n.space())
	}
	prevSpace := n.removeExtra
	for in != "" {
		p, l := n.prefix(in)
		in = in[l:]
		for prevSpace && strings.HasPrefix(p, " ") {
			p = p[1:]
		}
		if p != "" {
			prevSpace = strings.HasSuffix(p, " ")
			if n.escape {
				p = strings.ReplaceAll(p, " ", data.SpaceMarker)
			}
			b.WriteString(p)
		}
		prevSpace = prevSpace && n.removeExtra
	}
	out := b.String()
	if n.removeExtra {
		for strings.HasSuffix(out, n.space()) {
			out = out[:len(out)-len(n.space())]
		}
	}
	if n.addDummyPrefix && n.suffix {
		out += n.space()
	}
	return out
}

// prefix is the normalized text of the start of s and how many bytes of s
// it stands for: a user-defined symbol as it is, else the longest rule of
// the charsmap, else one character; a byte that starts no valid UTF-8
// character is U+FFFD.
func (n *normalizer) prefix(s string) (string, int) {
	if l := n.user.longest(s); l > 0 {
		return s[:l], l
	}
	if n.rules != nil {
		if r, l := n.rules.longest(s); l > 0 {
			return r, l
		}
	}
	r, l := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError && l == 1 {
		return "\uFFFD", 1
	}
	return s[:l], l
}

// oneCharLen is the length of the UTF-8 character that starts with byte
// b, judged by b alone (SentencePiece's OneCharLen).
func oneCharLen(b byte) int {
	return int("\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x02\x02\x03\x04"[b>>4])
}
