package sentencepiece

import "container/heap"

// symbol is a symbol of bpe's segmentation: the bytes [start, end) of the
// text, its neighbours (-1 at the ends), and whether it is a user-defined
// symbol, which never merges. A symbol merged into its left neighbour is
// empty.
type symbol struct {
	start, end int
	prev, next int
	freeze     bool
}

// pair is a candidate merge of the adjacent symbols left and right into a
// piece of size bytes with the given score.
type pair struct {
	left, right, size int
	score             float32
}

// agenda holds the candidate merges, best first: the highest score, then
// the leftmost (SentencePiece's SymbolPairComparator).
type agenda []pair

func (a agenda) Len() int { return len(a) }
func (a agenda) Less(i, j int) bool {
	return a[i].score > a[j].score || a[i].score == a[j].score && a[i].left < a[j].left
}
func (a agenda) Swap(i, j int) { a[i], a[j] = a[j], a[i] }
func (a *agenda) Push(x any)   { *a = append(*a, x.(pair)) }
func (a *agenda) Pop() any {
	old := *a
	p := old[len(old)-1]
	*a = old[:len(old)-1]
	return p
}

// bpeState is the segmentation of one text under way.
type bpeState struct {
	m       *Model
	s       string
	symbols []symbol
	agenda  agenda
	// unmerge records, for each unused piece that a merge may make, the
	// two symbols it was made of, so that it is split again at the end.
	unmerge map[string][2]string
}

// mergeBPE segments the normalized text s with a bpe model, as
// SentencePiece's bpe Model::SampleEncode does without dropout: the text
// starts as its characters (and user-defined symbols, which never
// merge), adjacent symbols whose concatenation is a piece merge, the
// highest-scoring merge first (the leftmost among equals), and pieces of
// type UNUSED are split again into the symbols they were made of.
func (m *Model) mergeBPE(s string) []segment {
	b := &bpeState{m: m, s: s, unmerge: map[string][2]string{}}
	for start := 0; start < len(s); {
		n := m.user.longest(s[start:])
		freeze := n > 0
		if !freeze {
			n = min(oneCharLen(s[start]), len(s)-start)
		}
		i := len(b.symbols)
		b.symbols = append(b.symbols, symbol{start: start, end: start + n, prev: i - 1, next: i + 1, freeze: freeze})
		start += n
	}
	b.symbols[len(b.symbols)-1].next = -1
	for i := 1; i < len(b.symbols); i++ {
		b.add(i-1, i)
	}
	for b.agenda.Len() > 0 {
		b.merge(heap.Pop(&b.agenda).(pair))
	}
	var segs []segment
	for i := 0; i != -1; i = b.symbols[i].next {
		segs = b.resegment(b.text(i), segs)
	}
	return segs
}

// text is the text of symbol i.
func (b *bpeState) text(i int) string { return b.s[b.symbols[i].start:b.symbols[i].end] }

// add puts the merge of symbols left and right on the agenda, if their
// concatenation is a piece (SentencePiece's MaybeAddNewSymbolPair).
func (b *bpeState) add(left, right int) {
	if left == -1 || right == -1 || b.symbols[left].freeze || b.symbols[right].freeze {
		return
	}
	text := b.s[b.symbols[left].start:b.symbols[right].end]
	id, ok := b.m.normal[text]
	if !ok {
		return
	}
	heap.Push(&b.agenda, pair{left: left, right: right, size: len(text), score: b.m.pieces[id].score})
	if b.m.pieces[id].typ == unusedPiece {
		b.unmerge[text] = [2]string{b.text(left), b.text(right)}
	}
}

// merge applies the merge p, unless an earlier merge changed either of
// its symbols, and adds the merges the new symbol makes possible.
func (b *bpeState) merge(p pair) {
	l, r := &b.symbols[p.left], &b.symbols[p.right]
	if l.start == l.end || r.start == r.end || (l.end-l.start)+(r.end-r.start) != p.size {
		return
	}
	l.end, l.next = r.end, r.next
	if r.next >= 0 {
		b.symbols[r.next].prev = p.left
	}
	r.start = r.end
	b.add(l.prev, p.left)
	b.add(p.left, l.next)
}

// resegment appends the segments of the symbol text to segs: its own, or
// for an unused piece, those of the two symbols it was made of.
func (b *bpeState) resegment(text string, segs []segment) []segment {
	id := b.m.ID(text)
	halves, ok := b.unmerge[text]
	if b.m.pieces[id].typ != unusedPiece || !ok {
		return append(segs, segment{text, id})
	}
	return b.resegment(halves[1], b.resegment(halves[0], segs))
}
