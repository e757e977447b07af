package decode

import (
	"cmp"
	"math"
	"slices"
)

// sampler draws tokens from the model's distribution reshaped by a Search's
// temperature, top-k and top-p.
type sampler struct {
	s   Search
	p   []float64
	idx []int
}

// pick draws a token from the log-probabilities row:
//
//	p_i ∝ exp(row_i / τ)
//
// restricted to the TopK most probable tokens (if TopK > 0), then to the
// fewest most probable ones whose probability reaches TopP of what is left
// (if 0 < TopP < 1), and renormalized.
func (sm *sampler) pick(row []float64) int {
	sm.p = slices.Grow(sm.p[:0], len(row))[:len(row)]
	sm.idx = sm.idx[:0]
	top := slices.Max(row)
	for i, v := range row {
		sm.p[i] = math.Exp((v - top) / sm.s.Temperature)
		sm.idx = append(sm.idx, i)
	}
	sm.filter()
	var total float64
	for _, i := range sm.idx {
		total += sm.p[i]
	}
	u, last := sm.s.Rand.Float64()*total, sm.idx[0]
	for _, i := range sm.idx {
		if sm.p[i] > 0 {
			last = i
		}
		if u -= sm.p[i]; u < 0 {
			return i
		}
	}
	return last
}

// filter keeps in idx the tokens that top-k and top-p allow.
func (sm *sampler) filter() {
	k, topP := sm.s.TopK, sm.s.TopP
	nucleus := topP > 0 && topP < 1
	if (k == 0 || k >= len(sm.idx)) && !nucleus {
		return
	}
	slices.SortStableFunc(sm.idx, func(a, b int) int { return cmp.Compare(sm.p[b], sm.p[a]) })
	if k > 0 {
		sm.idx = sm.idx[:min(k, len(sm.idx))]
	}
	if !nucleus {
		return
	}
	var total float64
	for _, i := range sm.idx {
		total += sm.p[i]
	}
	cum := 0.0
	for n, i := range sm.idx {
		if cum += sm.p[i]; cum >= topP*total {
			sm.idx = sm.idx[:n+1]
			return
		}
	}
}
