package layers

import (
	"math"
	"slices"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
)

// MultiHeadAttention is the paper's multi-head scaled dot-product attention
// (section 3.2), and with its options the attention of the variants:
//
//	Attention(Q, K, V) = softmax(Q·Kᵀ / sqrt(dk) + mask) · V
//	MultiHead(q, k, v) = Concat(head_1, …, head_h) · W_O,  head_i = Attention(q·W_Q_i, k·W_K_g(i), v·W_V_g(i))
//
// with dk = DModel/Heads. Its Heads query heads share KVHeads key/value
// heads (0 means Heads), head i reading key/value head g(i) = i /
// (Heads/KVHeads): KVHeads = Heads is the paper's attention, fewer is
// grouped-query attention (Ainslie et al., 2023) and 1 multi-query
// attention (Shazeer, 2019); the key/value cache of incremental decoding
// shrinks by Heads/KVHeads. With Rotary the queries and keys are rotated by
// their positions (RoPE, see Rotary; base RotaryBase, 10000 when 0); Bias,
// if not nil, adds a bias of the positions to the scores (ALiBi). Dropout,
// if not 0, applies to the attention weights. Parameters: q_proj [DModel,
// DModel], k_proj and v_proj [KVHeads·dk, DModel], out_proj [DModel,
// DModel], each a Linear (without biases with NoBias).
//
// The same builder makes self-attention (query = keyValue), causal
// self-attention (a causal mask) and encoder-decoder cross-attention
// (keyValue = the encoder's output).
type MultiHeadAttention struct {
	DModel, Heads, KVHeads int
	Dropout                float64
	Rotary                 bool
	RotaryBase             float64
	NoBias                 bool
	Bias                   PositionBias
}

// GroupedQueryAttention is MultiHeadAttention, whose KVHeads makes it
// grouped-query attention: the name of the variant.
type GroupedQueryAttention = MultiHeadAttention

// NewMultiHeadAttention returns the paper's attention with the given sizes
// and dropout on the attention weights.
func NewMultiHeadAttention(dModel, heads int, dropout float64) MultiHeadAttention {
	return MultiHeadAttention{DModel: dModel, Heads: heads, Dropout: dropout}
}

// PositionBias is a bias of the positions of queries and keys added to the
// attention scores before the softmax, as ALiBi does.
type PositionBias interface {
	// Bias is the bias [1, heads, lenQ, lenK] of queries at positions 0,
	// 1, … (or, with a cache slot at, the one query at at.Index) and keys
	// at positions 0, 1, …, divided by scale (the softmax multiplies it
	// back).
	Bias(s *graph.Scope, heads, lenQ, lenK int, at *Slot, scale float64) *G.Node
}

// Apply attends from query [batch, lenQ, dModel] to keyValue [batch, lenK,
// dModel] under mask, additive [batch or 1, 1, lenQ or 1, lenK]
// (PaddingMask, CausalMask) or nil, and returns [batch, lenQ, dModel]. The
// attention weights [batch, kvHeads, group·lenQ, lenK] (group =
// Heads/KVHeads, the rows of a group's heads one after another; [batch,
// heads, lenQ, lenK] for the paper's) are kept in s as "weights".
//
// cache, if not nil, is incremental decoding's (see Cache): with a slot,
// query [batch, 1, dModel] is the new position at.Index, whose keys and
// values are written into the cache and which attends to the slots at.Mask
// leaves visible (mask is not read); without one, the cache holds the keys
// and values of keyValue, projected by an earlier call (given a nil
// query, Apply projects them into the cache and returns nil).
func (a MultiHeadAttention) Apply(s *graph.Scope, query, keyValue, mask *G.Node, cache *Cache) *G.Node {
	if err := a.check(); err != nil {
		s.Fail(err)
		return nil
	}
	if cache == nil && a.kvHeads() == a.Heads && !a.Rotary && a.Bias == nil {
		return a.sideBySide(s, query, keyValue, mask)
	}
	var at *Slot
	if cache != nil && cache.At != nil {
		at, mask = cache.At, cache.At.Mask
	}
	var q *G.Node
	if query != nil {
		q = a.heads(s, "q_proj", query, a.Heads, at)
	}
	var k, v *G.Node
	if cache == nil || at != nil || cache.K == nil {
		// k_j = x·W_K_j (rotated), v_j = x·W_V_j: [batch, kvHeads, lenK, dk]
		v = a.heads(s, "v_proj", keyValue, a.kvHeads(), at)
		k = a.heads(s, "k_proj", keyValue, a.kvHeads(), at)
	}
	switch {
	case cache == nil:
	case at != nil:
		// the cache [batch, kvHeads, maxLen, dk], slot at.Index now holding k and v
		cache.K, cache.V = s.SetSlot(cache.K, k, at.Index), s.SetSlot(cache.V, v, at.Index)
		k, v = cache.K, cache.V
	case cache.K == nil:
		cache.K, cache.V = k, v
	default:
		k, v = cache.K, cache.V
	}
	if q == nil {
		return nil
	}
	return a.attend(s, q, k, v, mask, at)
}

// sideBySide is the paper's attention with the heads read where the
// projections leave them, head i in columns i·dk … (i+1)·dk
// (graph.HeadScores, graph.HeadMix), with no copies that split and merge
// them.
func (a MultiHeadAttention) sideBySide(s *graph.Scope, query, keyValue, mask *G.Node) *G.Node {
	proj := Linear{In: a.DModel, Out: a.DModel, NoBias: a.NoBias}
	// q, k, v: [batch, len, dModel], the heads side by side
	q := proj.Apply(s.In("q_proj"), query)
	k, v := proj.Apply(s.In("k_proj"), keyValue), proj.Apply(s.In("v_proj"), keyValue)
	// weights = softmax(q·kᵀ / sqrt(dk) + mask): [batch, heads, lenQ, lenK]
	weights := s.Softmax(s.HeadScores(q, k, a.Heads), mask, a.scale())
	s.Keep("weights", weights)
	// heads = weights·v, side by side: [batch, lenQ, dModel]
	heads := s.HeadMix(s.Dropout(weights, a.Dropout), v, a.Heads)
	return proj.Apply(s.In("out_proj"), heads)
}

// attend is the scaled dot-product attention of the heads' queries q
// [batch, heads, lenQ, dk] to the keys and values k, v [batch, kvHeads,
// lenK, dk], concatenated and projected by out_proj. The heads of a group
// read one key/value head: as rows of one product.
func (a MultiHeadAttention) attend(s *graph.Scope, q, k, v, mask *G.Node, at *Slot) *G.Node {
	if q == nil || k == nil || v == nil {
		s.Fail(errors.New("attention: missing queries, keys or values"))
		return nil
	}
	b, lenQ, dk, lenK := q.Shape()[0], q.Shape()[2], q.Shape()[3], k.Shape()[2]
	kvh := a.kvHeads()
	group := a.Heads / kvh
	// q: [batch, kvHeads, group·lenQ, dk], a group's heads one after another.
	q = reshape(s, q, b, kvh, group*lenQ, dk)
	// scores = q·kᵀ (+ bias / scale): [batch, kvHeads, group·lenQ, lenK]
	scores := s.BatchedMatMul(q, k, false, true)
	if a.Bias != nil {
		bias := a.positionBias(s, lenQ, lenK, at)
		if bias == nil {
			return nil
		}
		scores = s.Add(scores, reshape(s, bias, 1, kvh, group*lenQ, lenK))
	}
	// weights = softmax(scores / sqrt(dk) + mask)
	weights := s.Softmax(scores, groupMask(s, mask, group), a.scale())
	s.Keep("weights", weights)
	// heads = weights·v: [batch, kvHeads, group·lenQ, dk], then [batch, lenQ, dModel]
	heads := s.BatchedMatMul(s.Dropout(weights, a.Dropout), v, false, false)
	heads = s.MergeHeads(reshape(s, heads, b, a.Heads, lenQ, dk))
	return Linear{In: a.DModel, Out: a.DModel, NoBias: a.NoBias}.Apply(s.In("out_proj"), heads)
}

// heads projects x [batch, len, dModel] with the Linear named proj to n
// heads [batch, n, len, dk], rotated with Rotary for "q_proj" and "k_proj"
// at positions 0, 1, … or, with a slot, at at.Index.
func (a MultiHeadAttention) heads(s *graph.Scope, proj string, x *G.Node, n int, at *Slot) *G.Node {
	dk := a.DModel / a.Heads
	h := s.SplitHeads(Linear{In: a.DModel, Out: n * dk, NoBias: a.NoBias}.Apply(s.In(proj), x), n)
	if !a.Rotary || proj == "v_proj" {
		return h
	}
	r := Rotary{DHead: dk, Base: a.RotaryBase}
	if at == nil {
		return r.Apply(s, h)
	}
	return r.At(s, h, at.Index, at.Mask.Shape()[3])
}

// PlacesPositions reports whether the attention places positions itself,
// with Rotary or a Bias: a model of it needs no positions added to its
// embeddings.
func (a MultiHeadAttention) PlacesPositions() bool { return a.Rotary || a.Bias != nil }

// CacheDims are the key/value heads and dk = DModel/Heads of the keys and
// values of incremental decoding's cache.
func (a MultiHeadAttention) CacheDims() (heads, dk int) { return a.kvHeads(), a.DModel / a.Heads }

// kvHeads is KVHeads, or Heads when it is 0.
func (a MultiHeadAttention) kvHeads() int {
	if a.KVHeads == 0 {
		return a.Heads
	}
	return a.KVHeads
}

// scale is 1/sqrt(dk), which keeps the dot products of the queries and keys
// at unit variance.
func (a MultiHeadAttention) scale() float64 { return 1 / math.Sqrt(float64(a.DModel/a.Heads)) }

func (a MultiHeadAttention) check() error {
	if a.Heads < 1 || a.kvHeads() < 1 || a.DModel%a.Heads != 0 || a.Heads%a.kvHeads() != 0 {
		return errors.Errorf("attention: dModel %d, %d heads, %d key/value heads: heads must divide dModel, key/value heads the heads",
			a.DModel, a.Heads, a.KVHeads)
	}
	return nil
}

// groupMask repeats the rows of mask [batch or 1, 1, lenQ, lenK] once for
// each head of a group, [batch or 1, 1, group·lenQ, lenK], to match the
// grouped rows of the weights; a mask of one row broadcasts as it is.
func groupMask(s *graph.Scope, mask *G.Node, group int) *G.Node {
	if mask == nil || group == 1 || mask.Shape()[mask.Dims()-2] == 1 {
		return mask
	}
	rows := make([]*G.Node, group)
	for i := range rows {
		rows[i] = mask
	}
	return s.Concat(-2, rows...)
}

// positionBias is a.Bias's bias of lenQ queries and lenK keys, refused
// (nil, the error recorded in s) unless it is [1, heads, lenQ, lenK].
func (a MultiHeadAttention) positionBias(s *graph.Scope, lenQ, lenK int, at *Slot) *G.Node {
	bias := a.Bias.Bias(s, a.Heads, lenQ, lenK, at, a.scale())
	want := tensor.Shape{1, a.Heads, lenQ, lenK}
	switch {
	case s.Err() != nil:
		return nil
	case bias == nil:
		s.Fail(errors.Errorf("attention: the PositionBias %T gave no bias, want one of shape %v ([1, heads, lenQ, lenK])", a.Bias, want))
		return nil
	case !slices.Equal(bias.Shape(), want):
		s.Fail(errors.Errorf("attention: the PositionBias %T gave a bias of shape %v, want %v ([1, heads, lenQ, lenK])", a.Bias, bias.Shape(), want))
		return nil
	}
	return bias
}

// reshape is s.Reshape unless x already has the shape.
func reshape(s *graph.Scope, x *G.Node, dims ...int) *G.Node {
	if x != nil && x.Shape().Eq(tensor.Shape(dims)) {
		return x
	}
	return s.Reshape(x, dims...)
}
