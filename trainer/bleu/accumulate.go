package bleu

import (
	"math"
	"unicode/utf8"

	"github.com/pkg/errors"
)

// Accumulator sums the statistics of corpus BLEU, and optionally chrF, a
// pair at a time, so that a corpus of any length is scored in bounded
// memory: the scores are those of Corpus and ChrF over all the pairs
// added.
type Accumulator struct {
	opt   Options
	bleu  stats
	chrf  *ChrFOptions
	chrfS []chrFStat
	pairs int
}

// NewAccumulator returns an accumulator for BLEU with opt and, if chrf is
// not nil, chrF with *chrf.
func NewAccumulator(opt Options, chrf *ChrFOptions) (*Accumulator, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	a := &Accumulator{opt: opt.withDefaults()}
	if chrf != nil {
		o := chrf.withDefaults()
		if o.CharOrder < 0 || o.Beta < 0 {
			return nil, errors.Errorf("chrF order %d and beta %d must not be negative", o.CharOrder, o.Beta)
		}
		a.chrf, a.chrfS = &o, make([]chrFStat, o.CharOrder)
	}
	return a, nil
}

// Add adds the pair of a hypothesis and its reference. It is an error for
// either to be invalid UTF-8 and for the reference to be empty (sacreBLEU
// rejects that too); errors count lines from 1.
func (a *Accumulator) Add(hyp, ref string) error {
	line := a.pairs + 1
	switch {
	case !utf8.ValidString(hyp):
		return errors.Errorf("hypothesis line %d: invalid UTF-8", line)
	case !utf8.ValidString(ref):
		return errors.Errorf("reference line %d: invalid UTF-8", line)
	case ref == "":
		return errors.Errorf("reference line %d is empty", line)
	}
	a.pairs++
	a.bleu.add(a.opt.tokens(hyp), a.opt.tokens(ref))
	if a.chrf != nil {
		h, r := a.chrf.chars(hyp), a.chrf.chars(ref)
		for n := range a.chrfS {
			a.chrfS[n].add(charNgrams(h, n+1), charNgrams(r, n+1))
		}
	}
	return nil
}

// Pairs is the number of pairs added.
func (a *Accumulator) Pairs() int { return a.pairs }

// BLEU is the corpus BLEU of the pairs added; a score that is not finite
// is an error.
func (a *Accumulator) BLEU() (Score, error) { return a.bleu.score(a.opt).finite() }

// ChrF is the corpus chrF of the pairs added (zero without chrF options).
func (a *Accumulator) ChrF() ChrFScore {
	if a.chrf == nil {
		return ChrFScore{}
	}
	return ChrFScore{Score: fScore(a.chrfS, a.chrf.Beta), Beta: a.chrf.Beta, CharOrder: a.chrf.CharOrder}
}

// finite refuses a score with a number that is not finite, which no
// sentences give with valid options: a result is never +Inf or NaN.
func (s Score) finite() (Score, error) {
	for _, v := range append([]float64{s.Score, s.BP, s.Ratio}, s.Precisions[:]...) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return Score{}, errors.Errorf("BLEU is not finite: %v", s)
		}
	}
	return s, nil
}
