package data

import (
	"container/heap"
	"slices"

	"github.com/pkg/errors"
)

// minMergeCount is the fewest occurrences a pair needs to be merged.
const minMergeCount = 2

// LearnBPE learns up to numMerges BPE merges from sentences, which should
// be valid UTF-8; pass source and target sentences together for a joint
// vocabulary. Each step merges the adjacent symbol pair that occurs most
// often in the corpus (occurrences within a piece of Pretokenize, weighted
// by piece frequency). Ties are broken by the byte-wise lexicographic order
// of the pair's left symbol, then of its right symbol, so the result does
// not depend on the order of sentences, on the machine or on map iteration.
// Learning stops early when no pair occurs at least twice.
//
// Pair counts are updated incrementally: only the pieces containing the
// merged pair are revisited, found through an index from pairs to pieces,
// and the next pair is taken from a priority queue.
func LearnBPE(sentences []string, numMerges int) (*BPE, error) {
	if numMerges < 0 {
		return nil, errors.Errorf("negative number of merges %d", numMerges)
	}
	l := newLearner(countPieces(sentences))
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

// countPieces counts the pieces of sentences.
func countPieces(sentences []string) map[string]int {
	counts := make(map[string]int)
	for _, s := range sentences {
		for _, p := range Pretokenize(s) {
			counts[p]++
		}
	}
	return counts
}

// symPair is a pair of adjacent symbol ids.
type symPair struct{ a, b int32 }

// learner holds the state of LearnBPE. Symbols are interned as int32 ids;
// words are the distinct pieces of the corpus in sorted order.
type learner struct {
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

// newLearner indexes the pieces of counts.
func newLearner(counts map[string]int) *learner {
	pieces := make([]string, 0, len(counts))
	for p := range counts {
		pieces = append(pieces, p)
	}
	slices.Sort(pieces)
	l := &learner{
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
func (l *learner) intern(s string) int32 {
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
func (l *learner) addCounts(syms []int32, delta int) {
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
func (l *learner) index(w int32, syms []int32, s int32) {
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
func (l *learner) best() (p symPair, ok bool) {
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
func (l *learner) merge(p symPair, step int) {
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
func (l *learner) push(p symPair, n int) { heap.Push(&l.queue, l.entry(p, n)) }

// entry returns the queue entry of pair p with count n.
func (l *learner) entry(p symPair, n int) queueEntry {
	return queueEntry{count: n, pair: p, left: l.syms[p.a], right: l.syms[p.b]}
}
