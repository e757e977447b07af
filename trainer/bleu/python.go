package bleu

import (
	"strings"
	"unicode"
)

// sacreBLEU is written in Python, and its results depend on the exact
// meaning of Python's str.split, str.rstrip and str.lower. The helpers in
// this file reproduce those meanings for Go strings.

// isPySpace reports whether r is whitespace for Python's str.isspace, which
// str.split and str.rstrip use. It is Unicode's White_Space plus the
// information separators U+001C to U+001F.
func isPySpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}

// pyFields splits s like Python's s.split() with no arguments.
func pyFields(s string) []string {
	return strings.FieldsFunc(s, isPySpace)
}

// pyTrimRight removes trailing whitespace like Python's s.rstrip().
func pyTrimRight(s string) string {
	return strings.TrimRightFunc(s, isPySpace)
}

// pyLower lowercases s like Python's s.lower(): Unicode's simple lowercase
// mapping, plus the two language-independent special cases that Python
// applies: U+0130 becomes "i\u0307", and a capital sigma at the end of a
// word becomes the final form U+03C2.
func pyLower(s string) string {
	if !strings.ContainsAny(s, "\u0130\u03a3") {
		return strings.ToLower(s)
	}
	rs := []rune(s)
	var b strings.Builder
	b.Grow(len(s) + 2)
	for i, r := range rs {
		switch r {
		case '\u0130':
			b.WriteString("i\u0307")
		case '\u03a3':
			b.WriteRune(lowerSigma(rs, i))
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// lowerSigma returns the lowercase of the capital sigma at rs[i]: final
// sigma when a cased letter precedes it and none follows it, case-ignorable
// characters being skipped in both directions (Unicode's Final_Sigma).
func lowerSigma(rs []rune, i int) rune {
	before := i - 1
	for before >= 0 && isCaseIgnorable(rs[before]) {
		before--
	}
	after := i + 1
	for after < len(rs) && isCaseIgnorable(rs[after]) {
		after++
	}
	if before >= 0 && isCased(rs[before]) && (after == len(rs) || !isCased(rs[after])) {
		return '\u03c2'
	}
	return '\u03c3'
}

// isCased reports whether r has Unicode's derived property Cased.
func isCased(r rune) bool {
	return unicode.In(r, unicode.Lu, unicode.Ll, unicode.Lt, unicode.Other_Lowercase, unicode.Other_Uppercase)
}

// isCaseIgnorable reports whether r has Unicode's derived property
// Case_Ignorable: the word-break classes MidLetter, MidNumLet and
// Single_Quote, and the general categories Mn, Me, Cf, Lm and Sk.
func isCaseIgnorable(r rune) bool {
	switch r {
	case '\'', '.', ':', '\u00b7', '\u0387', '\u055f', '\u05f4', '\u2018', '\u2019',
		'\u2024', '\u2027', '\ufe13', '\ufe52', '\ufe55', '\uff07', '\uff0e', '\uff1a':
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk)
}
