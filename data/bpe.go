package data

import (
	"container/heap"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/pkg/errors"
)

// Merge is one BPE merge rule: adjacent symbols Left and Right become the
// single symbol Left+Right.
type Merge struct {
	Left, Right string
}

// maxCachedWords bounds the word cache of a BPE.
const maxCachedWords = 1 << 18

// BPE segments text into subword tokens with byte-pair-encoding merges
// (Sennrich, Haddow and Birch, 2016). Text is first split by Pretokenize;
// each piece starts as a sequence of characters (the SpaceMarker is fused
// with the character after it, so it is never a symbol alone), and merges
// are applied in the order they were learned.
//
// A BPE caches the segmentation of up to 262,144 distinct pieces and is
// safe for concurrent use.
type BPE struct {
	merges []Merge
	ranks  map[Merge]int

	mu    sync.RWMutex
	cache map[string][]string
}

// NewBPE returns a BPE applying merges in order. Each side of a merge must
// be non-empty valid UTF-8 without white space, and must be a single
// character (optionally preceded by SpaceMarker) or the result of an
// earlier merge; merges must be distinct.
func NewBPE(merges []Merge) (*BPE, error) {
	if i, err := checkMerges(merges); err != nil {
		return nil, errors.Wrapf(err, "merge %d", i+1)
	}
	return newBPE(merges), nil
}

// newBPE returns a BPE applying merges, which checkMerges accepted.
func newBPE(merges []Merge) *BPE {
	b := &BPE{
		merges: slices.Clone(merges),
		ranks:  make(map[Merge]int, len(merges)),
		cache:  make(map[string][]string),
	}
	for i, m := range merges {
		b.ranks[m] = i
	}
	return b
}

// checkMerges validates merges for NewBPE and returns the index of the
// first bad one.
func checkMerges(merges []Merge) (int, error) {
	made := make(map[string]bool)
	seen := make(map[Merge]bool)
	for i, m := range merges {
		for _, s := range []string{m.Left, m.Right} {
			if err := checkSymbol(s); err != nil {
				return i, err
			}
			if !made[s] && !isInitialSymbol(s) {
				return i, errors.Errorf("symbol %q is produced by no earlier merge", s)
			}
		}
		if seen[m] {
			return i, errors.Errorf("duplicate merge %q %q", m.Left, m.Right)
		}
		seen[m] = true
		made[m.Left+m.Right] = true
	}
	return 0, nil
}

// checkSymbol reports whether s can be a BPE symbol.
func checkSymbol(s string) error {
	switch {
	case s == "":
		return errors.New("empty symbol")
	case !utf8.ValidString(s):
		return errors.Errorf("symbol %q is not valid UTF-8", s)
	case strings.IndexFunc(s, unicode.IsSpace) >= 0:
		return errors.Errorf("symbol %q contains white space", s)
	}
	return nil
}

// isInitialSymbol reports whether s is one character, optionally preceded
// by SpaceMarker: a symbol present before any merge.
func isInitialSymbol(s string) bool {
	if rest, ok := strings.CutPrefix(s, SpaceMarker); ok && rest != "" {
		s = rest
	}
	return utf8.RuneCountInString(s) == 1
}

// initialSymbols splits a piece from Pretokenize into its symbols before
// any merge: its characters, the SpaceMarker fused with the first one.
func initialSymbols(piece string) []string {
	marker := ""
	if rest, ok := strings.CutPrefix(piece, SpaceMarker); ok && rest != "" {
		marker, piece = SpaceMarker, rest
	}
	syms := make([]string, 0, len(piece))
	for i := 0; i < len(piece); {
		_, n := utf8.DecodeRuneInString(piece[i:])
		syms = append(syms, piece[i:i+n])
		i += n
	}
	syms[0] = marker + syms[0]
	return syms
}

// Merges returns a copy of the merges in the order they are applied.
func (b *BPE) Merges() []Merge { return slices.Clone(b.merges) }

// Encode splits sentence into subword tokens.
func (b *BPE) Encode(sentence string) []string {
	var toks []string
	for _, piece := range Pretokenize(sentence) {
		toks = append(toks, b.segment(piece)...)
	}
	return toks
}

// Decode joins tokens from Encode back into text; it is Detokenize.
func (b *BPE) Decode(tokens []string) string { return Detokenize(tokens) }

// segment returns the subword tokens of one piece, through the cache.
// The returned slice must not be modified.
func (b *BPE) segment(piece string) []string {
	b.mu.RLock()
	syms, ok := b.cache[piece]
	b.mu.RUnlock()
	if ok {
		return syms
	}
	syms = b.applyMerges(initialSymbols(piece))
	b.mu.Lock()
	if len(b.cache) < maxCachedWords {
		b.cache[piece] = syms
	}
	b.mu.Unlock()
	return syms
}

// applyMerges repeatedly merges every occurrence of the adjacent pair of
// lowest rank, left to right, until no adjacent pair is a merge. The
// pairs wait in a queue by rank and position, so that a merge costs the
// occurrences it merges, not a scan of the word: a word of 500,000
// letters takes a moment, not minutes.
func (b *BPE) applyMerges(syms []string) []string {
	if len(syms) < 2 {
		return syms
	}
	syms = slices.Clone(syms)
	next, prev := make([]int, len(syms)), make([]int, len(syms))
	for i := range syms {
		next[i], prev[i] = i+1, i-1
	}
	next[len(syms)-1] = -1
	var q rankQueue
	push := func(i int) {
		if next[i] >= 0 {
			if r, ok := b.ranks[Merge{syms[i], syms[next[i]]}]; ok {
				heap.Push(&q, rankAt{r, i})
			}
		}
	}
	for i := range syms {
		push(i)
	}
	for q.Len() > 0 {
		e := heap.Pop(&q).(rankAt)
		i, m := e.pos, b.merges[e.rank]
		if syms[i] == "" || next[i] < 0 || syms[i] != m.Left || syms[next[i]] != m.Right {
			continue // stale: merged since it was queued
		}
		j := next[i]
		syms[i], syms[j], next[i] = m.Left+m.Right, "", next[j]
		if next[i] >= 0 {
			prev[next[i]] = i
		}
		if prev[i] >= 0 {
			push(prev[i])
		}
		push(i)
	}
	out := syms[:0]
	for i := 0; i >= 0; i = next[i] {
		out = append(out, syms[i])
	}
	return slices.Clip(out)
}

// rankAt is a merge of rank rank that may apply at position pos.
type rankAt struct{ rank, pos int }

// rankQueue is a min-heap of rankAt for container/heap: lowest rank
// first, then leftmost.
type rankQueue []rankAt

func (q rankQueue) Len() int { return len(q) }

func (q rankQueue) Less(i, j int) bool {
	if q[i].rank != q[j].rank {
		return q[i].rank < q[j].rank
	}
	return q[i].pos < q[j].pos
}

func (q rankQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }

// Push appends x, a rankAt.
func (q *rankQueue) Push(x any) { *q = append(*q, x.(rankAt)) }

// Pop removes and returns the last entry.
func (q *rankQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}
