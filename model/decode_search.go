package model

import (
	"cmp"
	"math"
	"slices"
)

// outputRow is row i of the log-probabilities lp [rows·vocab], with the
// tokens no output holds (padding and the start token) made impossible.
func outputRow(lp []float64, i, vocab int) []float64 {
	row := lp[i*vocab : (i+1)*vocab]
	row[PadID], row[BOSID] = math.Inf(-1), math.Inf(-1)
	return row
}

// lengthPenalty is GNMT's lp(Y) = ((5 + |Y|) / 6)^α (Wu et al., 2016).
func lengthPenalty(n int, alpha float64) float64 {
	return math.Pow((5+float64(n))/6, alpha)
}

// rule is how a search extends its beams: k rows a source, the nbest
// hypotheses it returns, GNMT's α, and the tokens that may extend a live
// beam of log-probabilities row (choose: the 2k most probable for beam
// search and greedy decoding, one drawn for sampling).
type rule struct {
	k, nbest int
	alpha    float64
	choose   func(row []float64, k int) []int
}

// search decodes in the session ss, r.k rows per source: once a source's
// rows have been fed its prefix, at every step its beams are extended by
// the tokens r.choose picks, the best r.k extensions go on (their rows'
// caches reordered by backpointers) and extensions ending with EOSID among
// the best r.k are finished. A source stops when r.k hypotheses are
// finished or its beams reach its length bound; its hypotheses are ranked
// by LogProb / lengthPenalty. With one beam and α 0 it is greedy decoding
// or sampling, whose Score is its LogProb.
func search(ss *session, pl plan, r rule) ([][]Hypothesis, error) {
	k := r.k
	rows := len(pl.prefixes) * k
	tokens, parents := make([]int, rows), make([]int, rows)
	for i := range tokens {
		tokens[i], parents[i] = pl.prefixes[i/k][0], i
	}
	var order []int // nil: one row a source, whose caches stay in place
	if k > 1 {
		order = parents
	}
	bs := make([]*beams, len(pl.prefixes))
	for i := range bs {
		bs[i] = newBeams(r, pl.limits[i])
	}
	for live := len(bs); live > 0; {
		if err := ss.advance(tokens, order); err != nil {
			return nil, err
		}
		for i, b := range bs {
			if b.done {
				continue
			}
			if p := pl.prefixes[i]; ss.t < len(p) {
				for j := i * k; j < (i+1)*k; j++ {
					tokens[j], parents[j] = p[ss.t], j // still feeding the prefix
				}
				continue
			}
			lp, err := ss.logProbs(i*k, k)
			if err != nil {
				return nil, err
			}
			b.extend(lp, len(lp)/k, tokens[i*k:(i+1)*k], parents[i*k:(i+1)*k], i*k)
			if b.done {
				live--
			}
		}
	}
	out := make([][]Hypothesis, len(bs))
	for i, b := range bs {
		out[i] = b.best(r.nbest)
	}
	return out, nil
}

// beams is the beam search of one source.
type beams struct {
	live     []prefix // the beams, one per row; a dead one has log-probability -Inf
	finished []Hypothesis
	limit    int
	rule
	done bool
}

// prefix is a live beam: the tokens so far and their log-probability.
type prefix struct {
	tokens []int
	logp   float64
}

// candidate extends beam `from` by tok, for a log-probability of logp.
type candidate struct {
	from, tok int
	logp      float64
}

// newBeams starts r.k beams from the start token. Only the first is
// alive, so that the first step does not extend k copies of one prefix.
func newBeams(r rule, limit int) *beams {
	b := &beams{live: make([]prefix, r.k), limit: limit, rule: r}
	for j := 1; j < r.k; j++ {
		b.live[j].logp = math.Inf(-1)
	}
	return b
}

// extend takes one step from the log-probabilities lp [k·vocab] of the beams'
// rows, the first of which is row0: it writes each row's next token and the
// row whose cache it continues into tokens and parents.
func (b *beams) extend(lp []float64, vocab int, tokens, parents []int, row0 int) {
	k := len(b.live)
	cands := b.candidates(lp, vocab)
	next := make([]prefix, 0, k)
	for rank, c := range cands {
		if c.tok == EOSID {
			if rank < k {
				b.finish(b.live[c.from].tokens, c.logp, true)
			}
			continue
		}
		tokens[len(next)], parents[len(next)] = c.tok, row0+c.from
		next = append(next, prefix{tokens: append(slices.Clone(b.live[c.from].tokens), c.tok), logp: c.logp})
		if len(next) == k {
			break
		}
	}
	for len(next) < k {
		tokens[len(next)], parents[len(next)] = EOSID, row0
		next = append(next, prefix{logp: math.Inf(-1)})
	}
	b.live = next
	switch {
	case len(b.finished) >= k || math.IsInf(next[0].logp, -1):
		b.done = true
	case len(next[0].tokens) >= b.limit:
		for _, p := range next {
			if !math.IsInf(p.logp, -1) {
				b.finish(p.tokens, p.logp, false)
			}
		}
		b.done = true
	}
}

// candidates are the extensions of each live beam that b.choose picks,
// best first.
func (b *beams) candidates(lp []float64, vocab int) []candidate {
	k := len(b.live)
	cands := make([]candidate, 0, 2*k*k)
	for j, p := range b.live {
		if math.IsInf(p.logp, -1) {
			continue
		}
		row := outputRow(lp, j, vocab)
		for _, w := range b.choose(row, 2*k) {
			cands = append(cands, candidate{from: j, tok: w, logp: p.logp + row[w]})
		}
	}
	slices.SortStableFunc(cands, func(x, y candidate) int { return cmp.Compare(y.logp, x.logp) })
	return cands
}

// finish adds tokens to the finished hypotheses, scored by their
// log-probability over the length penalty; ended counts the EOS.
func (b *beams) finish(tokens []int, logp float64, ended bool) {
	n := len(tokens)
	if ended {
		n++
	}
	b.finished = append(b.finished, Hypothesis{
		Tokens: slices.Clone(tokens), LogProb: logp, Score: logp / lengthPenalty(n, b.alpha), Ended: ended,
	})
}

// best is the n best finished hypotheses, best first.
func (b *beams) best(n int) []Hypothesis {
	slices.SortStableFunc(b.finished, func(x, y Hypothesis) int { return cmp.Compare(y.Score, x.Score) })
	return b.finished[:min(n, len(b.finished))]
}

// topK is the indices of the k largest finite values of v, largest first
// (of equal values, the first).
func topK(v []float64, k int) []int {
	idx := make([]int, 0, k+1)
	for i, x := range v {
		if math.IsInf(x, -1) || math.IsNaN(x) || (len(idx) == k && x <= v[idx[k-1]]) {
			continue
		}
		j := len(idx)
		for j > 0 && v[idx[j-1]] < x {
			j--
		}
		idx = slices.Insert(idx, j, i)
		if len(idx) > k {
			idx = idx[:k]
		}
	}
	return idx
}
