package data

import (
	"container/heap"
	"context"
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
// Pair counts are updated incrementally: a merge visits only the
// occurrences of the merged pair, found through an index from pairs to
// their positions, and the next pair is taken from a priority queue, so
// that a merge costs the occurrences it merges, however long the words
// holding them (one 500,000-letter word learns as fast as many short
// ones).
func LearnBPE(sentences []string, numMerges int) (*BPE, error) {
	return LearnBPEContext(context.Background(), sentences, numMerges)
}

// LearnBPEContext is LearnBPE, stopped with ctx's error when ctx is done
// (Ctrl-C in a command).
func LearnBPEContext(ctx context.Context, sentences []string, numMerges int) (*BPE, error) {
	if numMerges < 0 {
		return nil, errors.Errorf("negative number of merges %d", numMerges)
	}
	l := newLearner(countPieces(sentences))
	merges := make([]Merge, 0, numMerges)
	for len(merges) < numMerges {
		if err := ctx.Err(); err != nil {
			return nil, errors.Wrapf(err, "learning BPE, after %d of %d merges", len(merges), numMerges)
		}
		p, ok := l.best()
		if !ok {
			break
		}
		merges = append(merges, Merge{l.syms[p.a], l.syms[p.b]})
		l.merge(p)
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

// none marks the end of a word in node.prev and node.next, and a node
// merged into its left neighbour in node.sym.
const none = -1

// node is one symbol of a word: the symbols of every word lie in one
// slice, a word's in order, and each links to its neighbours in the word.
// A merge keeps the left node and unlinks the right one, so positions only
// grow from left to right within a word.
type node struct {
	sym, prev, next, word int32
}

// learner holds the state of LearnBPE. Symbols are interned as int32 ids;
// words are the distinct pieces of the corpus in sorted order.
type learner struct {
	syms  []string         // symbol id -> string
	symID map[string]int32 // string -> symbol id
	nodes []node           // the symbols of every word
	first []int32          // word -> its first node
	freq  []int            // word -> number of occurrences
	count map[symPair]int  // pair -> occurrences in the corpus
	// where lists, for each pair, the nodes where it started when it was
	// indexed; entries may be stale and are checked on use.
	where  map[symPair][]int32
	queue  pairQueue       // pairs by count; entries may be stale
	before map[symPair]int // pair -> count before the current merge step
}

// newLearner indexes the pieces of counts.
func newLearner(counts map[string]int) *learner {
	pieces := make([]string, 0, len(counts))
	for p := range counts {
		pieces = append(pieces, p)
	}
	slices.Sort(pieces)
	l := &learner{
		symID:  make(map[string]int32),
		first:  make([]int32, len(pieces)),
		freq:   make([]int, len(pieces)),
		count:  make(map[symPair]int),
		where:  make(map[symPair][]int32),
		before: make(map[symPair]int),
	}
	for w, p := range pieces {
		l.freq[w] = counts[p]
		l.first[w] = int32(len(l.nodes))
		syms := initialSymbols(p)
		for i, s := range syms {
			n := node{sym: l.intern(s), prev: int32(len(l.nodes)) - 1, next: int32(len(l.nodes)) + 1, word: int32(w)}
			if i == 0 {
				n.prev = none
			}
			if i == len(syms)-1 {
				n.next = none
			}
			l.nodes = append(l.nodes, n)
			if i > 0 {
				l.add(l.pairAt(n.prev), n.prev, l.freq[w])
			}
		}
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

// pairAt is the pair that starts at node i, whose next node exists.
func (l *learner) pairAt(i int32) symPair {
	return symPair{l.nodes[i].sym, l.nodes[l.nodes[i].next].sym}
}

// add adds delta to the count of pair p, remembering in before the count
// it had when it first changed during a merge step, and indexes node i,
// where it starts, when delta is positive.
func (l *learner) add(p symPair, i int32, delta int) {
	if _, ok := l.before[p]; !ok {
		l.before[p] = l.count[p]
	}
	if l.count[p] += delta; l.count[p] == 0 {
		delete(l.count, p)
	}
	if delta > 0 {
		l.where[p] = append(l.where[p], i)
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

// merge replaces pair p by a new symbol at each of its occurrences, left
// to right within each word (as mergePair does), and updates counts, index
// and queue.
func (l *learner) merge(p symPair) {
	ab := l.intern(l.syms[p.a] + l.syms[p.b])
	clear(l.before)
	at := l.where[p]
	delete(l.where, p)
	slices.Sort(at)
	for _, i := range at {
		if l.nodes[i].sym != p.a || l.nodes[i].next == none || l.pairAt(i) != p {
			continue // stale: merged since it was indexed
		}
		l.mergeAt(i, ab)
	}
	for q, n := range l.before {
		if c := l.count[q]; c != n && c > 0 {
			l.push(q, c)
		}
	}
}

// mergeAt merges the pair starting at node i into the symbol ab.
func (l *learner) mergeAt(i, ab int32) {
	j := l.nodes[i].next
	f := l.freq[l.nodes[i].word]
	h, k := l.nodes[i].prev, l.nodes[j].next
	l.add(l.pairAt(i), i, -f)
	if h != none {
		l.add(l.pairAt(h), h, -f)
	}
	if k != none {
		l.add(l.pairAt(j), j, -f)
	}
	l.nodes[i].sym, l.nodes[i].next = ab, k
	l.nodes[j].sym = none
	if k != none {
		l.nodes[k].prev = i
		l.add(l.pairAt(i), i, f)
	}
	if h != none {
		l.add(l.pairAt(h), h, f)
	}
}

// word is the symbols of word w now.
func (l *learner) word(w int) []int32 {
	var syms []int32
	for i := l.first[w]; i != none; i = l.nodes[i].next {
		syms = append(syms, l.nodes[i].sym)
	}
	return syms
}

// push queues pair p with its current count n.
func (l *learner) push(p symPair, n int) { heap.Push(&l.queue, l.entry(p, n)) }

// entry returns the queue entry of pair p with count n.
func (l *learner) entry(p symPair, n int) queueEntry {
	return queueEntry{count: n, pair: p, left: l.syms[p.a], right: l.syms[p.b]}
}
