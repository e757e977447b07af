package layers

import (
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"

	"github.com/transformer-go/transformer/graph"
)

// AttentionALiBi names attention with linear biases in a Registry: the
// paper's multi-head (or, with kv_heads, grouped-query) attention whose
// self-attention scores carry ALiBi, for positions "none". Its option
// alibi_max_bias (OptionALiBiMaxBias, 8) is ALiBi.MaxBias.
const (
	AttentionALiBi     = "alibi"
	OptionALiBiMaxBias = "alibi_max_bias"
)

// alibiMaxBias declares the option alibi_max_bias.
var alibiMaxBias = Option{Name: OptionALiBiMaxBias, Default: 8, Valid: positive, Want: "> 0"}

// ALiBi is attention with linear biases (Press et al., 2022), a
// PositionBias: instead of position encodings added to the embeddings,
// head h's score of a query at position i for a key at position j is
// penalized in proportion to their distance,
//
//	score_h(i, j) = q_i·k_jᵀ / sqrt(dk) - m_h·|i - j|
//
// (under a causal mask j ≤ i, the paper's -m_h·(i - j)), with the heads'
// slopes m_h the geometric sequence 2^(-b/n), 2^(-2b/n), …, 2^(-b) for n
// heads a power of 2 and b = MaxBias (8 when 0, the paper's), and
// otherwise those of the largest power of 2 below n followed by every
// other slope of twice as many heads. It has no parameters, and it
// extrapolates to sequences longer than those trained on.
type ALiBi struct{ MaxBias float64 }

// Bias is -m_h·|i - j| / scale (BiasTable).
func (a ALiBi) Bias(s *graph.Scope, heads, lenQ, lenK int, at *Slot, scale float64) *G.Node {
	m := a.slopes(heads)
	return BiasTable(s, fmt.Sprintf("alibi%g", a.MaxBias), heads, lenQ, lenK, at, func(h, i, j int) float64 {
		return -m[h] * math.Abs(float64(i-j)) / scale
	})
}

// PlacesPositions is true: the distances place the positions.
func (ALiBi) PlacesPositions() bool { return true }

// slopes are the slopes m_h of n heads.
func (a ALiBi) slopes(n int) []float64 {
	b := a.MaxBias
	if b == 0 {
		b = 8
	}
	geometric := func(n int) []float64 {
		m := make([]float64, n)
		for i := range m {
			m[i] = math.Pow(2, -b*float64(i+1)/float64(n))
		}
		return m
	}
	p := 1
	for p*2 <= n {
		p *= 2
	}
	slopes, more := geometric(p), geometric(2*p)
	for i := 0; len(slopes) < n; i += 2 {
		slopes = append(slopes, more[i])
	}
	return slopes
}
