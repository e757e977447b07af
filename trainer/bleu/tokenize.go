package bleu

import "strings"

// Tokenizer names accepted in Options.Tokenize.
const (
	// Tokenize13a is the tokenizer of mteval-v13a.pl, sacreBLEU's default.
	Tokenize13a = "13a"
	// TokenizeNone splits on whitespace only, for text that is already
	// tokenized.
	TokenizeNone = "none"
)

// tokenize13a tokenizes line like mteval-v13a.pl as sacreBLEU implements
// it and returns the tokens joined by single spaces. It drops "<skipped>",
// joins words hyphenated across a line break, turns newlines into spaces,
// unescapes &quot; &amp; &lt; &gt; (in that order, each once), splits off
// ASCII punctuation except the apostrophe, hyphen, period and comma, splits
// off periods and commas that are not between digits, and splits a hyphen
// off a preceding digit.
func tokenize13a(line string) string {
	for _, r := range [...][2]string{
		{"<skipped>", ""}, {"-\n", ""}, {"\n", " "},
		{"&quot;", `"`}, {"&amp;", "&"}, {"&lt;", "<"}, {"&gt;", ">"},
	} {
		line = strings.ReplaceAll(line, r[0], r[1])
	}
	rs := splitPunct([]rune(" " + line + " "))
	rs = rewritePairs(rs, func(a, b rune) bool { return !isDigit(a) && isPeriodComma(b) },
		func(a, b rune) []rune { return []rune{a, ' ', b, ' '} })
	rs = rewritePairs(rs, func(a, b rune) bool { return isPeriodComma(a) && !isDigit(b) },
		func(a, b rune) []rune { return []rune{' ', a, ' ', b} })
	rs = rewritePairs(rs, func(a, b rune) bool { return isDigit(a) && b == '-' },
		func(a, b rune) []rune { return []rune{a, ' ', b, ' '} })
	return strings.Join(pyFields(string(rs)), " ")
}

// splitPunct surrounds with spaces every rune that 13a always splits off.
func splitPunct(rs []rune) []rune {
	out := make([]rune, 0, len(rs)+len(rs)/2)
	for _, r := range rs {
		if isSplitPunct(r) {
			out = append(out, ' ', r, ' ')
		} else {
			out = append(out, r)
		}
	}
	return out
}

// isSplitPunct reports whether r is printable ASCII punctuation (or the
// space) other than the apostrophe, hyphen, period and comma.
func isSplitPunct(r rune) bool {
	switch {
	case r >= ' ' && r <= '&', r >= '(' && r <= '+', r >= ':' && r <= '@',
		r >= '[' && r <= '`', r >= '{' && r <= '~':
		return true
	}
	return r == '/'
}

// rewritePairs scans rs from the left and replaces each pair of adjacent
// runes for which match is true by repl of the pair, resuming after the
// pair, as a regular expression substitution of a two-rune pattern does.
func rewritePairs(rs []rune, match func(a, b rune) bool, repl func(a, b rune) []rune) []rune {
	out := make([]rune, 0, len(rs)+len(rs)/2)
	i := 0
	for ; i+1 < len(rs); i++ {
		if match(rs[i], rs[i+1]) {
			out = append(out, repl(rs[i], rs[i+1])...)
			i++
			continue
		}
		out = append(out, rs[i])
	}
	return append(out, rs[i:]...)
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

func isPeriodComma(r rune) bool { return r == '.' || r == ',' }
