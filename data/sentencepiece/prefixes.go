package sentencepiece

// prefixes finds which of a set of keys start a string, as SentencePiece's
// tries do: it maps every key to its id (0 or more) and every other
// non-empty prefix of a key to -1, so that a walk along a string stops at
// the first prefix that starts no key.
type prefixes map[string]int

// newPrefixes indexes the keys of ids (non-empty strings) with their ids.
func newPrefixes(ids map[string]int) prefixes {
	p := prefixes{}
	for key := range ids {
		for n := 1; n < len(key); n++ {
			if _, ok := p[key[:n]]; !ok {
				p[key[:n]] = -1
			}
		}
	}
	for key, id := range ids {
		p[key] = id
	}
	return p
}

// walk calls fn with the length and id of every key that starts s,
// shortest first.
func (p prefixes) walk(s string, fn func(n, id int)) {
	for n := 1; n <= len(s); n++ {
		id, ok := p[s[:n]]
		if !ok {
			return
		}
		if id >= 0 {
			fn(n, id)
		}
	}
}

// longest is the length of the longest key that starts s, 0 if none.
func (p prefixes) longest(s string) int {
	longest := 0
	p.walk(s, func(n, _ int) { longest = n })
	return longest
}
