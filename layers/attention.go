package layers

import (
	"math"

	G "gorgonia.org/gorgonia"

	"github.com/transformer-go/transformer/graph"
)

// MultiHeadAttention is the paper's multi-head scaled dot-product attention
// (section 3.2):
//
//	Attention(Q, K, V) = softmax(Q·Kᵀ / sqrt(dk) + mask) · V
//	MultiHead(q, k, v) = Concat(head_1, …, head_h) · W_O,  head_i = Attention(q·W_Q_i, k·W_K_i, v·W_V_i)
//
// with dk = dModel / heads. Dropout, if not 0, applies to the attention
// weights. The same builder makes self-attention (query = keyValue), causal
// self-attention (a causal mask) and encoder-decoder cross-attention
// (keyValue = the encoder's output). Parameters: q_proj, k_proj, v_proj and
// out_proj, each a Linear.
type MultiHeadAttention struct {
	DModel, Heads int
	Dropout       float64
}

// NewMultiHeadAttention returns attention with the given sizes and dropout on
// the attention weights.
func NewMultiHeadAttention(dModel, heads int, dropout float64) MultiHeadAttention {
	return MultiHeadAttention{DModel: dModel, Heads: heads, Dropout: dropout}
}

// Apply attends from query [batch, lenQ, dModel] to keyValue [batch, lenK,
// dModel]. mask is additive, [batch, 1, lenQ or 1, lenK] (see PaddingMask and
// CausalMask), or nil. The attention weights [batch, heads, lenQ, lenK] are kept
// in s as "weights" (Scope.Keep) for inspection.
func (a MultiHeadAttention) Apply(s *graph.Scope, query, keyValue, mask *G.Node) *G.Node {
	proj := NewLinear(a.DModel, a.DModel)
	// q, k, v: [batch, heads, len, dk]
	q := s.SplitHeads(proj.Apply(s.In("q_proj"), query), a.Heads)
	k := s.SplitHeads(proj.Apply(s.In("k_proj"), keyValue), a.Heads)
	v := s.SplitHeads(proj.Apply(s.In("v_proj"), keyValue), a.Heads)
	// weights = softmax(q·kᵀ / sqrt(dk) + mask): [batch, heads, lenQ, lenK]
	dk := float64(a.DModel / a.Heads)
	weights := s.Softmax(s.BatchedMatMul(q, k, false, true), mask, 1/math.Sqrt(dk))
	s.Keep("weights", weights)
	// heads = weights·v, concatenated: [batch, lenQ, dModel]
	heads := s.MergeHeads(s.BatchedMatMul(s.Dropout(weights, a.Dropout), v, false, false))
	return proj.Apply(s.In("out_proj"), heads)
}
