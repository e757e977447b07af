package layers

import (
	"fmt"
	"math"
	"slices"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/layers/ops"
)

// MultiHeadAttention is the paper's multi-head attention (section 3.2),
// and with its options the attention of the variants:
//
//	MultiHead(q, k, v) = Concat(head_1, …, head_h) · W_O,  head_i = Attention(q·W_Q_i, k·W_K_g(i), v·W_V_g(i))
//
// (Attention is ScaledDotProductAttention) with dk = DModel/Heads. Its
// Heads query heads share KVHeads key/value heads (0 means Heads), head i
// reading key/value head g(i) = i / (Heads/KVHeads): KVHeads = Heads is the
// paper's attention, fewer is grouped-query attention (Ainslie et al.,
// 2023) and 1 multi-query attention (Shazeer, 2019); the key/value cache
// of incremental decoding shrinks by Heads/KVHeads. With Rotary the
// queries and keys are rotated by their positions (RoPE, see Rotary; base
// RotaryBase, 10000 when 0); Bias, if not nil, adds a bias of the
// positions to the scores (ALiBi, a sliding window). Dropout, if not 0,
// applies to the attention weights. Parameters: q_proj [DModel, DModel],
// k_proj and v_proj [KVHeads·dk, DModel], out_proj [DModel, DModel], each
// a Linear (without biases with NoBias).
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
	// PlacesPositions reports whether the bias tells the attention where
	// its queries and keys are, as ALiBi's distances do, so that a model
	// of it adds no positions to its embeddings; a bias that only masks
	// (SlidingWindow) does not.
	PlacesPositions() bool
}

// BiasTable is a PositionBias's bias of heads heads, lenQ queries and lenK
// keys, f(h, i, j) for head h, a query at position i and a key at j: a
// constant [1, heads, lenQ, lenK] named name or, with a slot, the row of
// the one query at at.Index picked from the rows of every position of the
// cache.
func BiasTable(s *graph.Scope, name string, heads, lenQ, lenK int, at *Slot, f func(h, i, j int) float64) *G.Node {
	rows := lenQ
	if at != nil {
		rows = lenK
	}
	// t: [heads, rows, lenK], or row i holding query i's biases of every head, [rows, heads, lenK]
	t := make([]float64, 0, heads*rows*lenK)
	for a := range heads * rows {
		h, i := a/rows, a%rows
		if at != nil {
			h, i = a%heads, a/heads
		}
		for j := range lenK {
			t = append(t, f(h, i, j))
		}
	}
	if at == nil {
		return s.Constant(fmt.Sprintf("%s[%d,%d,%d]", name, heads, lenQ, lenK), graph.FromFloat64s(s.Dtype(), t, 1, heads, lenQ, lenK))
	}
	table := s.Constant(fmt.Sprintf("%s.rows[%d,%d]", name, heads, lenK), graph.FromFloat64s(s.Dtype(), t, lenK, heads*lenK))
	return s.Reshape(s.Embed(table, at.Index, 1), 1, heads, 1, lenK)
}

// ScaledDotProductAttention is the paper's attention (section 3.2.1) of
// every head at once, the heads side by side as the projections leave
// them:
//
//	Attention(Q, K, V) = softmax(Q·Kᵀ / sqrt(dk) + bias + mask) · V
//
// for each head h, reading key/value head g(h) = h / (heads/kvHeads). In
// einsum letters (b batch, i queries, j keys, h heads, g key/value heads,
// d = dk): q [b, i, h·d], k and v [b, j, g·d], mask additive [b or 1, 1,
// i or 1, j] or nil, bias [1, h, i, j] divided by 1/sqrt(dk) or nil. The
// weights [b, h, i, j] are kept in s as "weights", after which dropout,
// if not 0, applies to them. It returns [b, i, h·d].
func ScaledDotProductAttention(s *graph.Scope, q, k, v, mask, bias *G.Node, heads int, dropout float64) *G.Node {
	switch {
	case s.Err() != nil:
		return nil
	case q == nil || k == nil || v == nil:
		s.Fail(errors.New("attention: missing queries, keys or values"))
		return nil
	case q.Dims() != 3 || heads < 1 || q.Shape()[2]%heads != 0:
		s.Fail(errors.Errorf("attention: queries %v, want [batch, lenQ, heads·dk] of %d heads", q.Shape(), heads))
		return nil
	}
	dk := q.Shape()[2] / heads
	// scores = q·kᵀ: bi(hd),bj(gd) -> bhij
	scores := ops.HeadScores(s, q, k, heads)
	if bias != nil {
		scores = s.Add(scores, bias)
	}
	// weights = softmax(scores / sqrt(dk) + mask): bhij
	weights := s.Softmax(scores, mask, 1/math.Sqrt(float64(dk)))
	s.Keep("weights", weights)
	// y = weights·v: bhij,bj(gd) -> bi(hd)
	return ops.HeadMix(s, s.Dropout(weights, dropout), v, v.Shape()[2]/dk)
}

// Apply attends from query [batch, lenQ, dModel] to keyValue [batch, lenK,
// dModel] under mask, additive [batch or 1, 1, lenQ or 1, lenK]
// (PaddingMask, CausalMask) or nil, and returns [batch, lenQ, dModel]. The
// attention weights [batch, heads, lenQ, lenK] are kept in s as "weights".
//
// cache, if not nil, is what incremental decoding reads instead of
// keyValue's keys and values (see Cache): with a slot, the cache with the
// keys and values of keyValue, one new position, written into it, under
// the slot's mask (mask is not read); without one, the encoder output's
// (Memory's; keyValue is not read).
func (a MultiHeadAttention) Apply(s *graph.Scope, query, keyValue, mask *G.Node, cache *Cache) *G.Node {
	if !a.check(s) {
		return nil
	}
	var at *Slot
	if cache != nil && cache.At != nil {
		at, mask = cache.At, cache.At.Mask
	}
	// q: [batch, lenQ, heads·dk]; k, v: [batch, lenK, kvHeads·dk]
	q := a.project(s, "q_proj", query, a.Heads, at)
	k, v := a.keysValues(s, keyValue, cache, at)
	var bias *G.Node
	if a.Bias != nil && q != nil && k != nil {
		bias = a.positionBias(s, q.Shape()[1], k.Shape()[1], at)
	}
	y := ScaledDotProductAttention(s, q, k, v, mask, bias, a.Heads, a.Dropout)
	return Linear{In: a.DModel, Out: a.DModel, NoBias: a.NoBias}.Apply(s.In("out_proj"), y)
}

// keysValues are the keys and values attended to, [batch, lenK,
// kvHeads·dk] each: keyValue's; with a cache of a step (at its slot), the
// cache with keyValue's written into the slot, which its Carrier carries
// to the next step; with a cache of memory, the cache's.
func (a MultiHeadAttention) keysValues(s *graph.Scope, keyValue *G.Node, cache *Cache, at *Slot) (k, v *G.Node) {
	if cache != nil && at == nil {
		return cache.K, cache.V
	}
	k, v = a.project(s, "k_proj", keyValue, a.KeyValueHeads(), at), a.project(s, "v_proj", keyValue, a.KeyValueHeads(), at)
	if cache == nil {
		return k, v
	}
	// the cache [batch, maxLen, kvHeads·dk], slot at.Index now holding k and v
	k, v = ops.SetSlot(s, cache.K, k, at.Index), ops.SetSlot(s, cache.V, v, at.Index)
	if cache.carry != nil {
		cache.carry.Update(cache.K, k)
		cache.carry.Update(cache.V, v)
	}
	return k, v
}

// project is x [batch, len, dModel] projected by the Linear named proj to
// n heads side by side, [batch, len, n·dk]; with Rotary the queries and
// keys are rotated at positions 0, 1, … or, with a slot, at at.Index.
func (a MultiHeadAttention) project(s *graph.Scope, proj string, x *G.Node, n int, at *Slot) *G.Node {
	dk := a.DModel / a.Heads
	h := Linear{In: a.DModel, Out: n * dk, NoBias: a.NoBias}.Apply(s.In(proj), x)
	if !a.Rotary || proj == "v_proj" || h == nil {
		return h
	}
	return Rotary{DHead: dk, Base: a.RotaryBase}.sideBySide(s, h, n, at)
}

// Cache declares, in s, its self-attention's cache of rows rows at the
// decoding step at: keys and values [rows, maxLen, kvHeads·dk] (maxLen
// the positions of at.Mask), which c carries from step to step.
func (a MultiHeadAttention) Cache(s *graph.Scope, c Carrier, at *Slot, rows int) *Cache {
	if !a.check(s) {
		return &Cache{}
	}
	shape := []int{rows, at.Mask.Shape()[3], a.KeyValueHeads() * a.DModel / a.Heads}
	return &Cache{K: c.Carried(s, "cache.k", shape...), V: c.Carried(s, "cache.v", shape...), At: at, carry: c}
}

// Memory projects memory [batch, lenS, dModel] to the keys and values
// [batch, lenS, kvHeads·dk] that its cross-attention reads at every
// decoding step.
func (a MultiHeadAttention) Memory(s *graph.Scope, memory *G.Node) *Cache {
	if !a.check(s) {
		return &Cache{}
	}
	k, v := a.keysValues(s, memory, nil, nil)
	return &Cache{K: k, V: v}
}

// PlacesPositions reports whether the attention places positions itself,
// with Rotary or a Bias that does: a model of it needs no positions added
// to its embeddings.
func (a MultiHeadAttention) PlacesPositions() bool {
	return a.Rotary || a.Bias != nil && a.Bias.PlacesPositions()
}

// KeyValueHeads is KVHeads, or Heads when it is 0.
func (a MultiHeadAttention) KeyValueHeads() int {
	if a.KVHeads == 0 {
		return a.Heads
	}
	return a.KVHeads
}

// check reports whether heads divide dModel and key/value heads the heads,
// failing s if not.
func (a MultiHeadAttention) check(s *graph.Scope) bool {
	if a.Heads < 1 || a.KeyValueHeads() < 1 || a.DModel%a.Heads != 0 || a.Heads%a.KeyValueHeads() != 0 {
		s.Fail(errors.Errorf("attention: dModel %d, %d heads, %d key/value heads: heads must divide dModel, key/value heads the heads",
			a.DModel, a.Heads, a.KVHeads))
		return false
	}
	return true
}

// positionBias is a.Bias's bias of lenQ queries and lenK keys, refused
// (nil, the error recorded in s) unless it is [1, heads, lenQ, lenK].
func (a MultiHeadAttention) positionBias(s *graph.Scope, lenQ, lenK int, at *Slot) *G.Node {
	bias := a.Bias.Bias(s, a.Heads, lenQ, lenK, at, 1/math.Sqrt(float64(a.DModel/a.Heads)))
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
