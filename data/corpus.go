package data

import (
	"fmt"
	"strings"

	"github.com/pkg/errors"
)

// Pair is a source sentence and its translation.
type Pair struct {
	Src, Tgt string
}

// ReadOptions selects which pairs the corpus readers keep.
type ReadOptions struct {
	// MaxLen, when positive, skips pairs whose source or target is longer
	// than MaxLen as measured by Length.
	MaxLen int
	// Length measures a sentence in tokens; nil means the number of
	// pieces from Pretokenize. Pass a function of a BPE to measure subwords.
	Length func(sentence string) int
	// Strict makes an empty or too long pair an error instead of a skip.
	Strict bool
	// MaxBytes, when positive, bounds the memory the kept pairs take
	// (their text and PairBytes each): a corpus that passes it, such as
	// an endless input, is an error naming the file and line instead of
	// a process that runs out of memory.
	MaxBytes int64
	// Limit names what MaxBytes comes from, for its error.
	Limit string
}

// PairBytes is the memory a kept Pair takes beside its text.
const PairBytes = 32

// ReadStats counts what a corpus reader did. Read == Kept + SkippedEmpty +
// SkippedLong.
type ReadStats struct {
	Read         int // pairs read
	Kept         int // pairs returned
	SkippedEmpty int // pairs with an empty (or all white space) side
	SkippedLong  int // pairs with a side longer than MaxLen
}

// pairFilter applies ReadOptions to pairs and keeps the statistics.
type pairFilter struct {
	opt   ReadOptions
	stats ReadStats
	pairs []Pair
	bytes int64 // the memory the kept pairs take
	// text: the pairs are lines of plain text, their sources empty.
	text bool
	// find, when positive, makes add stop at the find-th kept pair,
	// recording where it is in found (PairLine).
	find  int
	found string
}

// errFound stops a reader at the pair pairFilter.find.
var errFound = errors.New("found")

// add counts p and keeps it if it passes the options. where locates p for
// an error message.
func (f *pairFilter) add(p Pair, where func() string) error {
	f.stats.Read++
	reason := ""
	switch {
	case (!f.text && strings.TrimSpace(p.Src) == "") || strings.TrimSpace(p.Tgt) == "":
		f.stats.SkippedEmpty++
		reason = "empty sentence"
	case f.opt.MaxLen > 0 && max(f.length(p.Src), f.length(p.Tgt)) > f.opt.MaxLen:
		f.stats.SkippedLong++
		reason = fmt.Sprintf("sentence longer than %d tokens", f.opt.MaxLen)
	default:
		f.bytes += int64(len(p.Src)+len(p.Tgt)) + PairBytes
		if f.opt.MaxBytes > 0 && f.bytes > f.opt.MaxBytes {
			return errors.Errorf("%s: the %d pairs read so far take more than the %d bytes a corpus may take in memory (%s)",
				where(), f.stats.Kept+1, f.opt.MaxBytes, f.opt.Limit)
		}
		f.stats.Kept++
		if f.find > 0 {
			if f.stats.Kept == f.find {
				f.found = where()
				return errFound
			}
			return nil
		}
		f.pairs = append(f.pairs, p)
		return nil
	}
	if f.opt.Strict {
		return errors.Errorf("%s: %s", where(), reason)
	}
	return nil
}

// result returns the kept pairs, or an error naming where when none is
// left.
func (f *pairFilter) result(where string) ([]Pair, ReadStats, error) {
	if len(f.pairs) == 0 && f.find == 0 {
		what := "sentence pairs"
		if f.text {
			what = "sentences"
		}
		return nil, f.stats, errors.Errorf("%s: no %s (%d read, %d empty, %d too long)",
			where, what, f.stats.Read, f.stats.SkippedEmpty, f.stats.SkippedLong)
	}
	return f.pairs, f.stats, nil
}

// length measures s according to the options.
func (f *pairFilter) length(s string) int {
	if f.opt.Length != nil {
		return f.opt.Length(s)
	}
	return len(Pretokenize(s))
}
