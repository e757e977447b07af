// Package bleu computes corpus-level BLEU and chrF the way sacreBLEU 2.6.0
// does, so that scores and their printed form agree with sacreBLEU's:
//
//	BLEU = 28.21 68.0/41.3/21.4/10.5 (BP = 1.000 ratio = 1.087 hyp_len = 50 ref_len = 46)
//	nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0
//
// The defaults are sacreBLEU's: the 13a tokenizer, exponential smoothing,
// case-sensitive matching, n-grams up to order 4 and no effective order for
// BLEU; character 6-grams, beta 2 and whitespace excluded for chrF. Each
// score is computed against a single reference per hypothesis. Inputs are
// detokenized sentences; Python's definitions of whitespace and lowercase
// are reproduced so that non-ASCII text is scored as sacreBLEU scores it.
//
// Signatures end in version:2.6.0 ([SacreBLEUVersion]): the version field
// names the sacreBLEU release whose algorithm and conventions this package
// reproduces, so a signature reads exactly as sacreBLEU 2.6.0 prints it for
// the same settings and a score carrying it is comparable with scores
// reported under that signature.
package bleu

import (
	"fmt"
	"math"
	"strings"

	"github.com/pkg/errors"
)

// SacreBLEUVersion is the sacreBLEU release that this package reproduces;
// it is the version field of every signature.
const SacreBLEUVersion = "2.6.0"

// MaxOrder is the largest word n-gram order that BLEU counts.
const MaxOrder = 4

// Smoothing methods accepted in Options.Smooth. They are the methods 1 to 3
// of Chen and Cherry (2014) that sacreBLEU offers, and none.
const (
	// SmoothExp halves the credit of each successive order with no match
	// (NIST's smoothing, as in mteval-v13a.pl); sacreBLEU's default.
	SmoothExp = "exp"
	// SmoothNone applies no smoothing: an order without a match gives 0.
	SmoothNone = "none"
	// SmoothFloor gives an order without a match SmoothValue matches
	// (default 0.1).
	SmoothFloor = "floor"
	// SmoothAddK adds SmoothValue (default 1) to the matches and totals of
	// orders 2 and up.
	SmoothAddK = "add-k"
)

// Options selects the BLEU variant. The zero value is sacreBLEU's default.
type Options struct {
	// Lowercase lowercases hypotheses and references before tokenizing.
	Lowercase bool
	// Tokenize is Tokenize13a (used when empty) or TokenizeNone.
	Tokenize string
	// Smooth is SmoothExp (used when empty), SmoothNone, SmoothFloor or
	// SmoothAddK.
	Smooth string
	// SmoothValue is the value of SmoothFloor and SmoothAddK; zero selects
	// sacreBLEU's default, 0.1 for floor and 1 for add-k.
	SmoothValue float64
	// EffectiveOrder averages only the orders below the first one for
	// which the hypotheses have no n-grams at all, instead of all
	// MaxOrder orders; recommended for Sentence.
	EffectiveOrder bool
}

// withDefaults returns o with empty fields set to their defaults.
func (o Options) withDefaults() Options {
	if o.Tokenize == "" {
		o.Tokenize = Tokenize13a
	}
	if o.Smooth == "" {
		o.Smooth = SmoothExp
	}
	if o.SmoothValue == 0 {
		switch o.Smooth {
		case SmoothFloor:
			o.SmoothValue = 0.1
		case SmoothAddK:
			o.SmoothValue = 1
		}
	}
	return o
}

// Validate reports whether o names a known tokenizer and smoothing method
// and a usable smoothing value.
func (o Options) Validate() error {
	o = o.withDefaults()
	switch o.Tokenize {
	case Tokenize13a, TokenizeNone:
	default:
		return errors.Errorf("unknown tokenizer %q (want %q or %q)", o.Tokenize, Tokenize13a, TokenizeNone)
	}
	switch o.Smooth {
	case SmoothExp, SmoothNone, SmoothFloor, SmoothAddK:
	default:
		return errors.Errorf("unknown smoothing method %q (want %s, %s, %s or %s)",
			o.Smooth, SmoothExp, SmoothNone, SmoothFloor, SmoothAddK)
	}
	if o.SmoothValue < 0 || math.IsNaN(o.SmoothValue) || math.IsInf(o.SmoothValue, 0) {
		return errors.Errorf("smoothing value %v is not a non-negative number", o.SmoothValue)
	}
	if most := maxSmoothValue[o.Smooth]; o.SmoothValue > most {
		return errors.Errorf("smoothing value %v of %s: want at most %v", o.SmoothValue, o.Smooth, most)
	}
	return nil
}

// maxSmoothValue bounds the smoothing values: a floor above 1 would count
// an n-gram that never matches as more than one that does, and add-k's k
// is bounded far above any use so that no precision overflows.
var maxSmoothValue = map[string]float64{SmoothFloor: 1, SmoothAddK: 1e6}

// Signature returns sacreBLEU's reproducibility signature for BLEU with
// these options against one reference, such as
// "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0". Floor and
// add-k carry their value, as in "smooth:floor[0.10]".
func (o Options) Signature() string {
	o = o.withDefaults()
	smooth := o.Smooth
	if o.Smooth == SmoothFloor || o.Smooth == SmoothAddK {
		smooth += fmt.Sprintf("[%.2f]", o.SmoothValue)
	}
	return fmt.Sprintf("nrefs:1|case:%s|eff:%s|tok:%s|smooth:%s|version:%s",
		caseField(o.Lowercase), yesNo(o.EffectiveOrder), o.Tokenize, smooth, SacreBLEUVersion)
}

func caseField(lowercase bool) string {
	if lowercase {
		return "lc"
	}
	return "mixed"
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// Score is a BLEU score with the statistics it was computed from.
type Score struct {
	// Score is BLEU on sacreBLEU's scale, 0 to 100.
	Score float64
	// Counts holds, for n = 1 to MaxOrder, the number of hypothesis
	// n-grams that the references match (clipped counts).
	Counts [MaxOrder]int
	// Totals holds, for n = 1 to MaxOrder, the number of hypothesis
	// n-grams.
	Totals [MaxOrder]int
	// Precisions holds the smoothed n-gram precisions in percent.
	Precisions [MaxOrder]float64
	// BP is the brevity penalty.
	BP float64
	// Ratio is HypLen / RefLen, or 0 when RefLen is 0.
	Ratio float64
	// HypLen and RefLen are the numbers of hypothesis and reference tokens.
	HypLen, RefLen int
}

// String formats s as sacreBLEU does, for example
// "BLEU = 28.21 68.0/41.3/21.4/10.5 (BP = 1.000 ratio = 1.087 hyp_len = 50 ref_len = 46)".
func (s Score) String() string {
	precs := make([]string, len(s.Precisions))
	for i, p := range s.Precisions {
		precs[i] = fmt.Sprintf("%.1f", p)
	}
	return fmt.Sprintf("BLEU = %.2f %s (BP = %.3f ratio = %.3f hyp_len = %d ref_len = %d)",
		s.Score, strings.Join(precs, "/"), s.BP, s.Ratio, s.HypLen, s.RefLen)
}

// Corpus returns the corpus BLEU of hyps against refs, where refs[i] is the
// reference of hyps[i]. It is an error for the slices to differ in length,
// for a reference to be empty (sacreBLEU rejects that too), for a sentence
// to be invalid UTF-8, and for opt to name an unknown method.
func Corpus(hyps, refs []string, opt Options) (Score, error) {
	a, err := accumulate(hyps, refs, opt, nil)
	if err != nil {
		return Score{}, err
	}
	return a.BLEU()
}

// accumulate adds the pairs of hyps and refs to a new Accumulator.
func accumulate(hyps, refs []string, opt Options, chrf *ChrFOptions) (*Accumulator, error) {
	a, err := NewAccumulator(opt, chrf)
	if err != nil {
		return nil, err
	}
	if len(hyps) != len(refs) {
		return nil, errors.Errorf("%d hypotheses but %d references", len(hyps), len(refs))
	}
	for i := range hyps {
		if err := a.Add(hyps[i], refs[i]); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// Sentence returns the BLEU of one hypothesis against its reference. As
// sacreBLEU advises, set opt.EffectiveOrder for sentence-level scores.
func Sentence(hyp, ref string, opt Options) (Score, error) {
	return Corpus([]string{hyp}, []string{ref}, opt)
}

// tokens preprocesses a sentence as sacreBLEU's BLEU does: optional
// lowercasing, removal of trailing whitespace, tokenization, and a split
// on whitespace.
func (o Options) tokens(sent string) []string {
	if o.Lowercase {
		sent = pyLower(sent)
	}
	sent = pyTrimRight(sent)
	if o.Tokenize == Tokenize13a {
		sent = tokenize13a(sent)
	}
	return pyFields(sent)
}

// stats are BLEU's sufficient statistics, summed over segments.
type stats struct {
	hypLen, refLen int
	counts, totals [MaxOrder]int
}

// add adds the statistics of one tokenized hypothesis and reference.
func (s *stats) add(hyp, ref []string) {
	s.hypLen += len(hyp)
	s.refLen += len(ref)
	refGrams := ngrams(ref)
	for gram, c := range ngrams(hyp) {
		n := strings.Count(gram, " ")
		s.totals[n] += c
		s.counts[n] += min(c, refGrams[gram])
	}
}

// ngrams counts the n-grams of tokens for n = 1 to MaxOrder, each n-gram
// keyed by its tokens joined with single spaces.
func ngrams(tokens []string) map[string]int {
	m := make(map[string]int, MaxOrder*len(tokens))
	for n := 1; n <= MaxOrder; n++ {
		for i := 0; i+n <= len(tokens); i++ {
			m[strings.Join(tokens[i:i+n], " ")]++
		}
	}
	return m
}

// score computes BLEU from s as sacreBLEU's compute_bleu does.
func (s stats) score(opt Options) Score {
	out := Score{Counts: s.counts, Totals: s.totals, HypLen: s.hypLen, RefLen: s.refLen, BP: 1}
	if s.refLen > 0 {
		out.Ratio = float64(s.hypLen) / float64(s.refLen)
	}
	if s.hypLen < s.refLen {
		out.BP = 0
		if s.hypLen > 0 {
			out.BP = math.Exp(1 - float64(s.refLen)/float64(s.hypLen))
		}
	}
	if s.counts == [MaxOrder]int{} {
		return out
	}
	order := s.precisions(opt, &out.Precisions)
	var logSum float64
	for _, p := range out.Precisions[:order] {
		logSum += flooredLog(p)
	}
	out.Score = out.BP * math.Exp(logSum/float64(order))
	return out
}

// precisions fills precs with the smoothed precisions in percent and
// returns the number of orders to average: MaxOrder, or with effective
// order the highest order for which the hypotheses have n-grams.
func (s stats) precisions(opt Options, precs *[MaxOrder]float64) int {
	order, expFactor := MaxOrder, 1.0
	for n := range MaxOrder {
		correct, total := float64(s.counts[n]), float64(s.totals[n])
		if opt.Smooth == SmoothAddK && n > 0 {
			correct += opt.SmoothValue
			total += opt.SmoothValue
		}
		if total == 0 {
			break
		}
		if opt.EffectiveOrder {
			order = n + 1
		}
		switch {
		case correct != 0:
			precs[n] = 100 * correct / total
		case opt.Smooth == SmoothExp:
			expFactor *= 2
			precs[n] = 100 / (expFactor * total)
		case opt.Smooth == SmoothFloor:
			precs[n] = 100 * opt.SmoothValue / total
		}
	}
	return order
}

// flooredLog is the natural logarithm with log(0) replaced by -9999999999,
// as in sacreBLEU, so that a zero precision gives a zero score.
func flooredLog(x float64) float64 {
	if x == 0 {
		return -9999999999
	}
	return math.Log(x)
}
