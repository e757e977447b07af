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

// KV are the keys and values of the positions attended to, projected and split
// into heads: K and V are [batch, heads, lenK, dk].
type KV struct{ K, V *G.Node }

// Apply attends from query [batch, lenQ, dModel] to keyValue [batch, lenK,
// dModel], computing what Attend(query, Project(keyValue)) does. mask is additive, [batch, 1, lenQ
// or 1, lenK] (see PaddingMask and CausalMask), or nil. The attention weights
// [batch, heads, lenQ, lenK] are kept in s as "weights" (Scope.Keep) for
// inspection.
//
// The heads are read where the projections leave them, head i in columns
// i·dk … (i+1)·dk (graph.HeadScores, graph.HeadMix), with no copies that
// split and merge them.
func (a MultiHeadAttention) Apply(s *graph.Scope, query, keyValue, mask *G.Node) *G.Node {
	proj := NewLinear(a.DModel, a.DModel)
	// q, k, v: [batch, len, dModel], the heads side by side
	q := proj.Apply(s.In("q_proj"), query)
	k, v := proj.Apply(s.In("k_proj"), keyValue), proj.Apply(s.In("v_proj"), keyValue)
	// weights = softmax(q·kᵀ / sqrt(dk) + mask): [batch, heads, lenQ, lenK]
	weights := s.Softmax(s.HeadScores(q, k, a.Heads), mask, a.scale())
	s.Keep("weights", weights)
	// heads = weights·v, side by side: [batch, lenQ, dModel]
	heads := s.HeadMix(s.Dropout(weights, a.Dropout), v)
	return proj.Apply(s.In("out_proj"), heads)
}

// scale is 1/sqrt(dk), which keeps the dot products of the queries and keys
// at unit variance.
func (a MultiHeadAttention) scale() float64 { return 1 / math.Sqrt(float64(a.DModel/a.Heads)) }

// Project computes the keys and values of x [batch, lenK, dModel] for Attend:
//
//	K_i = x·W_K_i,  V_i = x·W_V_i   for each head i
//
// An incremental decoder computes them once for the encoder's output, and once
// per new position for its self-attention cache.
func (a MultiHeadAttention) Project(s *graph.Scope, x *G.Node) KV {
	proj := NewLinear(a.DModel, a.DModel)
	// k, v: [batch, heads, lenK, dk]
	return KV{
		K: s.SplitHeads(proj.Apply(s.In("k_proj"), x), a.Heads),
		V: s.SplitHeads(proj.Apply(s.In("v_proj"), x), a.Heads),
	}
}

// Attend attends from query [batch, lenQ, dModel] to the projected keys and
// values kv, under mask as in Apply.
func (a MultiHeadAttention) Attend(s *graph.Scope, query *G.Node, kv KV, mask *G.Node) *G.Node {
	return a.attend(s, a.query(s, query), kv, mask)
}

// Cached is causal self-attention for one new position of an incremental
// decoder. query [batch, 1, dModel] is the new position; cache holds the keys
// and values of the positions before it, [batch, heads, maxLen, dk]. The
// position's own keys and values are written into slot at.Index of the cache
// (graph.SetSlot), and the query attends to the slots at.Mask leaves visible.
// It returns the attention's output [batch, 1, dModel] and the updated cache,
// which the next step reads.
func (a MultiHeadAttention) Cached(s *graph.Scope, query *G.Node, cache KV, at Slot) (*G.Node, KV) {
	kv := a.Project(s, query)
	// cache: [batch, heads, maxLen, dk], with slot at.Index now holding kv
	cache = KV{K: s.SetSlot(cache.K, kv.K, at.Index), V: s.SetSlot(cache.V, kv.V, at.Index)}
	return a.Attend(s, query, cache, at.Mask), cache
}

// CacheDims are the heads and dk = dModel / heads of the keys and values.
func (a MultiHeadAttention) CacheDims() (heads, dk int) { return a.Heads, a.DModel / a.Heads }

// Slot is where an incremental decoding step writes in the self-attention
// caches. Index, an int [1], is the new position t; Mask, additive and
// [batch or 1, 1, 1, maxLen], is 0 for the slots up to t and -Inf after
// (StepMask).
type Slot struct{ Index, Mask *G.Node }

// query projects query [batch, lenQ, dModel] to the heads' queries
// q_i = query·W_Q_i: [batch, heads, lenQ, dk].
func (a MultiHeadAttention) query(s *graph.Scope, query *G.Node) *G.Node {
	return s.SplitHeads(NewLinear(a.DModel, a.DModel).Apply(s.In("q_proj"), query), a.Heads)
}

// attend is the scaled dot-product attention of the heads' queries q to kv,
// concatenated and projected by out_proj.
func (a MultiHeadAttention) attend(s *graph.Scope, q *G.Node, kv KV, mask *G.Node) *G.Node {
	// weights = softmax(q·kᵀ / sqrt(dk) + mask): [batch, heads, lenQ, lenK]
	weights := s.Softmax(s.BatchedMatMul(q, kv.K, false, true), mask, a.scale())
	s.Keep("weights", weights)
	// heads = weights·v, concatenated: [batch, lenQ, dModel]
	heads := s.MergeHeads(s.BatchedMatMul(s.Dropout(weights, a.Dropout), kv.V, false, false))
	return NewLinear(a.DModel, a.DModel).Apply(s.In("out_proj"), heads)
}
