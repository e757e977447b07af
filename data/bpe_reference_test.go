package data

import (
	"container/heap"
	"slices"

	"github.com/pkg/errors"
)

// referenceLearnBPE is LearnBPE as it was before it indexed positions:
// at every merge it rescans each word holding the pair. It is the
// reference whose merges LearnBPE must equal.
func referenceLearnBPE(sentences []string, numMerges int) (*BPE, error) {
	if numMerges < 0 {
		return nil, errors.Errorf("negative number of merges %d", numMerges)
	}
	l := newRefLearner(countPieces(sentences))
	merges := make([]Merge, 0, numMerges)
	for len(merges) < numMerges {
		p, ok := l.best()
		if !ok {
			break
		}
		merges = append(merges, Merge{l.syms[p.a], l.syms[p.b]})
		l.merge(p, len(merges))
	}
	return NewBPE(merges)
}

// refLearner holds the state of referenceLearnBPE. Symbols are interned as int32 ids;
// words are the distinct pieces of the corpus in sorted order.
type refLearner struct {
	syms  []string         // symbol id -> string
	symID map[string]int32 // string -> symbol id
	words [][]int32        // word -> current symbols
	freq  []int            // word -> number of occurrences
	count map[symPair]int  // pair -> occurrences in the corpus
	// where lists, for each pair, the words that contained it when it was
	// indexed; entries may be stale or repeated and are checked on use.
	where   map[symPair][]int32
	queue   pairQueue       // pairs by count; entries may be stale
	visited []int           // word -> last merge step that visited it
	before  map[symPair]int // pair -> count before the current merge step
}

// newRefLearner indexes the pieces of counts.
func newRefLearner(counts map[string]int) *refLearner {
	pieces := make([]string, 0, len(counts))
	for p := range counts {
		pieces = append(pieces, p)
	}
	slices.Sort(pieces)
	l := &refLearner{
		symID:   make(map[string]int32),
		words:   make([][]int32, len(pieces)),
		freq:    make([]int, len(pieces)),
		count:   make(map[symPair]int),
		where:   make(map[symPair][]int32),
		visited: make([]int, len(pieces)),
		before:  make(map[symPair]int),
	}
	for w, p := range pieces {
		l.freq[w] = counts[p]
		for _, s := range initialSymbols(p) {
			l.words[w] = append(l.words[w], l.intern(s))
		}
		l.addCounts(l.words[w], l.freq[w])
		l.index(int32(w), l.words[w], -1)
	}
	for p, n := range l.count {
		l.queue = append(l.queue, l.entry(p, n))
	}
	heap.Init(&l.queue)
	clear(l.before)
	return l
}

// intern returns the id of symbol s, allocating one if needed.
func (l *refLearner) intern(s string) int32 {
	id, ok := l.symID[s]
	if !ok {
		id = int32(len(l.syms))
		l.syms = append(l.syms, s)
		l.symID[s] = id
	}
	return id
}

// addCounts adds delta to the count of every adjacent pair of syms,
// remembering in before the count a pair had when it first changed during
// a merge step.
func (l *refLearner) addCounts(syms []int32, delta int) {
	for i := 0; i+1 < len(syms); i++ {
		p := symPair{syms[i], syms[i+1]}
		if _, ok := l.before[p]; !ok {
			l.before[p] = l.count[p]
		}
		if l.count[p] += delta; l.count[p] == 0 {
			delete(l.count, p)
		}
	}
}

// index records word w, whose symbols are syms, under each adjacent pair
// that involves symbol s, or under every adjacent pair if s is -1.
func (l *refLearner) index(w int32, syms []int32, s int32) {
	for i := 0; i+1 < len(syms); i++ {
		p := symPair{syms[i], syms[i+1]}
		if s >= 0 && p.a != s && p.b != s {
			continue
		}
		if ws := l.where[p]; len(ws) == 0 || ws[len(ws)-1] != w {
			l.where[p] = append(ws, w)
		}
	}
}

// best removes and returns the pair to merge next, skipping stale queue
// entries; ok is false when no pair occurs minMergeCount times.
func (l *refLearner) best() (p symPair, ok bool) {
	for l.queue.Len() > 0 {
		e := heap.Pop(&l.queue).(queueEntry)
		if l.count[e.pair] != e.count {
			continue
		}
		return e.pair, e.count >= minMergeCount
	}
	return symPair{}, false
}

// merge replaces pair p by a new symbol in every word that contains it and
// updates counts, index and queue. step numbers the merge from 1.
func (l *refLearner) merge(p symPair, step int) {
	ab := l.intern(l.syms[p.a] + l.syms[p.b])
	clear(l.before)
	for _, w := range l.where[p] {
		if l.visited[w] == step {
			continue
		}
		l.visited[w] = step
		old := l.words[w]
		merged, changed := mergePair(old, p.a, p.b, ab)
		if !changed {
			continue
		}
		l.addCounts(old, -l.freq[w])
		l.addCounts(merged, l.freq[w])
		l.index(w, merged, ab)
		l.words[w] = merged
	}
	delete(l.where, p)
	for q, n := range l.before {
		if c := l.count[q]; c != n && c > 0 {
			l.push(q, c)
		}
	}
}

// push queues pair p with its current count n.
func (l *refLearner) push(p symPair, n int) { heap.Push(&l.queue, l.entry(p, n)) }

// entry returns the queue entry of pair p with count n.
func (l *refLearner) entry(p symPair, n int) queueEntry {
	return queueEntry{count: n, pair: p, left: l.syms[p.a], right: l.syms[p.b]}
}

// referenceApplyMerges is BPE.applyMerges as it was before it used a
// queue: a scan of the whole word for every merge applied.
func referenceApplyMerges(b *BPE, syms []string) []string {
	for len(syms) > 1 {
		best := -1
		for i := 0; i+1 < len(syms); i++ {
			if r, ok := b.ranks[Merge{syms[i], syms[i+1]}]; ok && (best < 0 || r < best) {
				best = r
			}
		}
		if best < 0 {
			break
		}
		m := b.merges[best]
		syms, _ = mergePair(syms, m.Left, m.Right, m.Left+m.Right)
	}
	return syms
}

// mergePair replaces every occurrence of the adjacent pair (a, b) in syms,
// scanning left to right, by ab. It returns the new symbols and whether
// anything changed; syms itself is left untouched.
func mergePair[T comparable](syms []T, a, b, ab T) ([]T, bool) {
	var out []T
	for i := 0; i < len(syms); i++ {
		if i+1 < len(syms) && syms[i] == a && syms[i+1] == b {
			if out == nil {
				out = append(make([]T, 0, len(syms)-1), syms[:i]...)
			}
			out = append(out, ab)
			i++
		} else if out != nil {
			out = append(out, syms[i])
		}
	}
	if out == nil {
		return syms, false
	}
	return out, true
}
