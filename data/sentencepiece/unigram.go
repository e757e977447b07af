package sentencepiece

import (
	"math"
	"slices"

	"github.com/pkg/errors"
)

// unkPenalty is how much less than the least score of a normal piece an
// unknown character scores (SentencePiece's kUnkPenalty).
const unkPenalty float32 = 10

// indexLattice indexes the pieces a unigram model matches in text, and
// the least and greatest scores of its normal pieces, as SentencePiece's
// unigram Model does (the greatest starts at FLT_MIN, the least positive
// float, not at the most negative).
func (m *Model) indexLattice() error {
	if len(m.normal) == 0 {
		return errors.New("a unigram model without normal, user-defined or unused pieces")
	}
	m.lattice = newPrefixes(m.normal)
	m.minScore, m.maxScore = math.MaxFloat32, 0x1p-126 // FLT_MAX, FLT_MIN
	for _, p := range m.pieces {
		if p.typ == normalPiece {
			m.minScore, m.maxScore = min(m.minScore, p.score), max(m.maxScore, p.score)
		}
	}
	return nil
}

// best is the best path found so far that ends at a position of the text:
// the id of its last piece, where that piece starts (-1: no path yet), and
// its score.
type best struct {
	id, start int
	score     float32
}

// viterbi segments the normalized text s with a unigram model: the
// segmentation whose pieces' scores sum highest, each character no piece
// starts with being unknown. It is SentencePiece's EncodeOptimized, with
// its arithmetic: scores and sums in float32, but the sum of a piece's
// score with the path's computed and compared in float64 (a user-defined
// symbol's score, length × the greatest score − 0.1, is a double).
func (m *Model) viterbi(s string) []segment {
	ends := make([]best, len(s)+1)
	for i := range ends {
		ends[i] = best{id: -1, start: -1}
	}
	unkScore := m.minScore - unkPenalty
	for start := 0; start < len(s); {
		here := ends[start].score
		char := min(oneCharLen(s[start]), len(s)-start)
		single := false
		m.lattice.walk(s[start:], func(n, id int) {
			p := m.pieces[id]
			if p.typ == unusedPiece {
				return
			}
			score := float64(p.score)
			if p.typ == userPiece {
				score = float64(float32(n)*m.maxScore) - 0.1
			}
			if to, sum := &ends[start+n], score+float64(here); to.start == -1 || sum > float64(to.score) {
				*to = best{id: id, start: start, score: float32(sum)}
			}
			single = single || n == char
		})
		if to, sum := &ends[start+char], unkScore+here; !single && (to.start == -1 || sum > to.score) {
			*to = best{id: m.unk, start: start, score: sum}
		}
		start += char
	}
	return backtrack(s, ends)
}

// backtrack reads the best path that ends at the end of s.
func backtrack(s string, ends []best) []segment {
	var segs []segment
	for end := len(s); end > 0 && ends[end].start >= 0; end = ends[end].start {
		segs = append(segs, segment{s[ends[end].start:end], ends[end].id})
	}
	slices.Reverse(segs)
	return segs
}
