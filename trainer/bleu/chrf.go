package bleu

import (
	"fmt"
	"strings"
)

// ChrFOptions selects the chrF variant (Popović, 2015). The zero value is
// sacreBLEU's default: character n-grams up to order 6, beta 2, case
// sensitive, whitespace excluded, effective-order averaging. Word n-grams
// (chrF++) are not implemented.
type ChrFOptions struct {
	// CharOrder is the largest character n-gram order; 0 selects 6.
	CharOrder int
	// Beta weighs recall Beta times as much as precision; 0 selects 2.
	Beta int
	// Lowercase lowercases hypotheses and references first.
	Lowercase bool
	// Whitespace keeps whitespace inside character n-grams; by default all
	// whitespace is removed before n-grams are taken.
	Whitespace bool
}

// withDefaults returns o with zero orders and beta set to their defaults.
func (o ChrFOptions) withDefaults() ChrFOptions {
	if o.CharOrder == 0 {
		o.CharOrder = 6
	}
	if o.Beta == 0 {
		o.Beta = 2
	}
	return o
}

// Signature returns sacreBLEU's reproducibility signature for chrF with
// these options against one reference, such as
// "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0".
func (o ChrFOptions) Signature() string {
	o = o.withDefaults()
	return fmt.Sprintf("nrefs:1|case:%s|eff:yes|nc:%d|nw:0|space:%s|version:%s",
		caseField(o.Lowercase), o.CharOrder, yesNo(o.Whitespace), SacreBLEUVersion)
}

// ChrFScore is a chrF score.
type ChrFScore struct {
	// Score is chrF on sacreBLEU's scale, 0 to 100.
	Score float64
	// Beta and CharOrder are the parameters it was computed with.
	Beta, CharOrder int
}

// String formats s as sacreBLEU does, for example "chrF2 = 66.10".
func (s ChrFScore) String() string {
	return fmt.Sprintf("chrF%d = %.2f", s.Beta, s.Score)
}

// ChrF returns the corpus chrF of hyps against refs, where refs[i] is the
// reference of hyps[i]. Its errors are those of Corpus.
func ChrF(hyps, refs []string, opt ChrFOptions) (ChrFScore, error) {
	a, err := accumulate(hyps, refs, Options{}, &opt)
	if err != nil {
		return ChrFScore{}, err
	}
	return a.ChrF(), nil
}

// chars preprocesses a sentence for chrF: optional lowercasing and removal
// of all whitespace.
func (o ChrFOptions) chars(sent string) []rune {
	if o.Lowercase {
		sent = pyLower(sent)
	}
	if !o.Whitespace {
		sent = strings.Join(pyFields(sent), "")
	}
	return []rune(sent)
}

// chrFStat counts the character n-grams of one order, summed over segments.
type chrFStat struct {
	hyp, ref, match int
}

// add adds the counts of one segment's hypothesis and reference n-grams.
// As in sacreBLEU, hypothesis n-grams count only where the reference has
// n-grams of that order.
func (s *chrFStat) add(hyp, ref map[string]int) {
	for gram, c := range ref {
		s.ref += c
		s.match += min(c, hyp[gram])
	}
	if len(ref) == 0 {
		return
	}
	for _, c := range hyp {
		s.hyp += c
	}
}

// charNgrams counts the n-grams of rs.
func charNgrams(rs []rune, n int) map[string]int {
	m := make(map[string]int, len(rs))
	for i := 0; i+n <= len(rs); i++ {
		m[string(rs[i:i+n])]++
	}
	return m
}

// fScore averages precision and recall over the orders for which both
// hypotheses and references have n-grams, and combines them into the
// F-beta score in percent.
func fScore(st []chrFStat, beta int) float64 {
	var prec, rec float64
	orders := 0
	for _, s := range st {
		if s.hyp > 0 && s.ref > 0 {
			prec += float64(s.match) / float64(s.hyp)
			rec += float64(s.match) / float64(s.ref)
			orders++
		}
	}
	if orders == 0 || prec+rec == 0 {
		return 0
	}
	prec /= float64(orders)
	rec /= float64(orders)
	b2 := float64(beta * beta)
	f := (1 + b2) * prec * rec
	f /= b2*prec + rec
	return 100 * f
}
