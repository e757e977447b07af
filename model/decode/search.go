package decode

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/model"
)

// Hypothesis is one decoded output.
type Hypothesis struct {
	// Tokens are the output ids, without model.BOSID and model.EOSID.
	Tokens []int
	// LogProb is Σ_t log p(y_t | y_<t, x) over the tokens and the final EOSID
	// (absent when the output reached its length bound first).
	LogProb float64
	// Score ranks hypotheses: for beam search LogProb / lp(Y) with GNMT's
	// length penalty lp(Y) = ((5 + |Y|) / 6)^α, |Y| counting EOSID; otherwise
	// LogProb.
	Score float64
	// Ended reports whether the output ended with EOSID.
	Ended bool
}

// The decoding methods of Search.
const (
	MethodGreedy = "greedy" // the most probable token at every step
	MethodBeam   = "beam"   // beam search with a length penalty
	MethodSample = "sample" // draw each token from the model's distribution
)

// DefaultExtraLen is how many tokens longer than its source (or prompt) an
// output may be when Search.MaxLen is 0.
const DefaultExtraLen = 50

// Search configures Decode.
type Search struct {
	// Method is MethodGreedy, MethodBeam or MethodSample.
	Method string
	// Beam is the beam size, NBest the number of hypotheses returned per
	// source (at most Beam) and Alpha the α of the length penalty.
	Beam, NBest int
	Alpha       float64
	// Temperature τ > 0 divides the logits before sampling; TopK > 0 keeps the
	// K most probable tokens and 0 < TopP < 1 the fewest most probable ones
	// whose probability reaches TopP (nucleus sampling); Rand draws.
	Temperature float64
	TopK        int
	TopP        float64
	Rand        *rand.Rand
	// MaxLen bounds every output's length in tokens; 0 means the length of
	// its source plus DefaultExtraLen. Either way a decoder-only model's
	// prompt and output together fit the config's MaxLen.
	MaxLen int
	// Batch is how many sources are decoded together.
	Batch int
}

// DefaultSearch is the paper's beam search: beam 4 and α 0.6, batches of 32
// sources, outputs up to DefaultExtraLen tokens longer than their sources.
func DefaultSearch() Search {
	return Search{Method: MethodBeam, Beam: 4, NBest: 1, Alpha: 0.6, Temperature: 1, Batch: 32}
}

// Validate reports the first thing wrong with s.
func (s Search) Validate() error {
	switch {
	case s.Method != MethodGreedy && s.Method != MethodBeam && s.Method != MethodSample:
		return errors.Errorf("unknown decoding method %q: want greedy, beam or sample", s.Method)
	case s.Method == MethodBeam && (s.Beam < 1 || s.NBest < 1 || s.NBest > s.Beam):
		return errors.Errorf("beam search needs 1 ≤ n-best ≤ beam, have n-best %d and beam %d", s.NBest, s.Beam)
	case s.Method == MethodBeam && !(s.Alpha >= 0 && s.Alpha <= 10):
		return errors.Errorf("beam search needs a length penalty α in [0, 10], have %g", s.Alpha)
	case s.Method == MethodSample && (!(s.Temperature > 0) || math.IsInf(s.Temperature, 1) || s.TopK < 0 || !(s.TopP >= 0 && s.TopP <= 1)):
		return errors.Errorf("sampling needs temperature > 0, top-k ≥ 0 and top-p in [0, 1], have %g, %d and %g", s.Temperature, s.TopK, s.TopP)
	case s.Method == MethodSample && s.Rand == nil:
		return errors.New("sampling needs a random number generator")
	case s.MaxLen < 0 || s.Batch < 1:
		return errors.Errorf("decoding needs max length ≥ 0 and batch ≥ 1, have %d and %d", s.MaxLen, s.Batch)
	}
	return nil
}

// OutputTokens counts the tokens of the best hypotheses of each source, EOS
// included: what decoding speeds are measured in.
func OutputTokens(hyps [][]Hypothesis) int {
	n := 0
	for _, h := range hyps {
		n += len(h[0].Tokens)
		if h[0].Ended {
			n++
		}
	}
	return n
}

// outputRow is row i of the log-probabilities lp [rows·vocab], with the
// tokens no output holds (padding and the start token) made impossible.
func outputRow(lp []float64, i, vocab int) []float64 {
	row := lp[i*vocab : (i+1)*vocab]
	row[model.PadID], row[model.BOSID] = math.Inf(-1), math.Inf(-1)
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
		if c.tok == model.EOSID {
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
		tokens[len(next)], parents[len(next)] = model.EOSID, row0
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
//
// A value enters only if it is above the bar: the k-th largest so far once
// there are k, else -Inf; the one comparison also refuses NaN and -Inf, so
// most of a row costs a comparison a value.
func topK(v []float64, k int) []int {
	idx := make([]int, 0, k+1)
	bar := math.Inf(-1)
	for i, x := range v {
		if !(x > bar) {
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
		if len(idx) == k {
			bar = v[idx[k-1]]
		}
	}
	return idx
}
