package layers

import (
	"math"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
)

// GroupedQueryAttention is multi-head attention whose Heads query heads
// share KVHeads key/value heads, each serving a group of Heads/KVHeads
// consecutive query heads (Ainslie et al., 2023): KVHeads = Heads is
// MultiHeadAttention's arithmetic, KVHeads = 1 multi-query attention
// (Shazeer, 2019). The key/value cache of incremental decoding shrinks by
// Heads/KVHeads. With dk = DModel/Heads and g(i) the group of head i:
//
//	head_i = softmax(q·W_Q_i · (k·W_K_g(i))ᵀ / sqrt(dk) + mask) · v·W_V_g(i)
//	GQA(q, k, v) = Concat(head_1, …, head_Heads) · W_O
//
// With Rotary the queries and keys are rotated by their positions (RoPE,
// see Rotary; base RotaryBase, 10000 when 0), the positions of Apply and
// Project being 0, 1, …; without it, positions are the input's business.
// Parameters: q_proj [DModel, DModel], k_proj and v_proj [KVHeads·dk,
// DModel], out_proj [DModel, DModel], each a Linear (without biases with
// NoBias).
type GroupedQueryAttention struct {
	DModel, Heads, KVHeads int
	Dropout                float64
	Rotary                 bool
	RotaryBase             float64
	NoBias                 bool
}

// Apply attends from query [batch, lenQ, dModel] to keyValue [batch, lenK,
// dModel]: Attend(query, Project(keyValue)). mask is additive, [batch or 1,
// 1, lenQ or 1, lenK] (PaddingMask, CausalMask), or nil. The attention
// weights [batch, kvHeads, group·lenQ, lenK] (the rows of a group's heads one
// after another) are kept in s as "weights".
func (a GroupedQueryAttention) Apply(s *graph.Scope, query, keyValue, mask *G.Node) *G.Node {
	return a.attend(s, a.heads(s, "q_proj", query, a.Heads, nil, 0), a.Project(s, keyValue), mask)
}

// Project computes the keys and values of x [batch, lenK, dModel], K and V
// [batch, kvHeads, lenK, dk]:
//
//	K_j = x·W_K_j (rotated at positions 0, 1, … with Rotary),  V_j = x·W_V_j
func (a GroupedQueryAttention) Project(s *graph.Scope, x *G.Node) KV { return a.project(s, x, nil, 0) }

// Attend attends from query [batch, lenQ, dModel] to the projected keys and
// values kv, under mask as in Apply.
func (a GroupedQueryAttention) Attend(s *graph.Scope, query *G.Node, kv KV, mask *G.Node) *G.Node {
	return a.attend(s, a.heads(s, "q_proj", query, a.Heads, nil, 0), kv, mask)
}

// Cached is causal self-attention for one new position of an incremental
// decoder, as MultiHeadAttention.Cached: query [batch, 1, dModel] at
// position at.Index, cache [batch, kvHeads, maxLen, dk]. It returns the
// output [batch, 1, dModel] and the cache with the position's keys and
// values written into slot at.Index.
func (a GroupedQueryAttention) Cached(s *graph.Scope, query *G.Node, cache KV, at Slot) (*G.Node, KV) {
	if cache.K == nil || cache.K.Dims() != 4 {
		s.Fail(errors.New("grouped-query attention: the cache needs keys [batch, kvHeads, maxLen, dk]"))
		return nil, cache
	}
	maxLen := cache.K.Shape()[2]
	kv := a.project(s, query, at.Index, maxLen)
	// cache: [batch, kvHeads, maxLen, dk], with slot at.Index now holding kv
	cache = KV{K: s.SetSlot(cache.K, kv.K, at.Index), V: s.SetSlot(cache.V, kv.V, at.Index)}
	q := a.heads(s, "q_proj", query, a.Heads, at.Index, maxLen)
	return a.attend(s, q, cache, at.Mask), cache
}

// CacheDims are the key/value heads and dk = DModel/Heads: the cache of
// incremental decoding holds KVHeads heads, not Heads.
func (a GroupedQueryAttention) CacheDims() (heads, dk int) { return a.KVHeads, a.DModel / a.Heads }

// project is Project at the positions pos (an int [lenK], below maxLen), or
// 0, 1, … when pos is nil.
func (a GroupedQueryAttention) project(s *graph.Scope, x, pos *G.Node, maxLen int) KV {
	v := a.heads(s, "v_proj", x, a.KVHeads, nil, 0)
	return KV{K: a.heads(s, "k_proj", x, a.KVHeads, pos, maxLen), V: v}
}

// heads projects x [batch, len, dModel] with the Linear named proj to n
// heads [batch, n, len, dk], rotated at pos (see project) for "q_proj" and
// "k_proj" with Rotary.
func (a GroupedQueryAttention) heads(s *graph.Scope, proj string, x *G.Node, n int, pos *G.Node, maxLen int) *G.Node {
	if err := a.check(); err != nil {
		s.Fail(err)
		return nil
	}
	dk := a.DModel / a.Heads
	h := s.SplitHeads(Linear{In: a.DModel, Out: n * dk, NoBias: a.NoBias}.Apply(s.In(proj), x), n)
	if !a.Rotary || proj == "v_proj" {
		return h
	}
	r := Rotary{DHead: dk, Base: a.RotaryBase}
	if pos == nil {
		return r.Apply(s, h)
	}
	return r.At(s, h, pos, maxLen)
}

func (a GroupedQueryAttention) check() error {
	if a.Heads < 1 || a.KVHeads < 1 || a.DModel%a.Heads != 0 || a.Heads%a.KVHeads != 0 {
		return errors.Errorf("grouped-query attention: dModel %d, %d heads, %d key/value heads: heads must divide dModel, key/value heads the heads",
			a.DModel, a.Heads, a.KVHeads)
	}
	return nil
}

// attend is the scaled dot-product attention of the heads' queries q
// [batch, heads, lenQ, dk] to kv, concatenated and projected by out_proj.
// The heads of a group read one key/value head: as rows of one product.
func (a GroupedQueryAttention) attend(s *graph.Scope, q *G.Node, kv KV, mask *G.Node) *G.Node {
	if q == nil || kv.K == nil || kv.V == nil {
		s.Fail(errors.New("grouped-query attention: missing queries, keys or values"))
		return nil
	}
	b, lenQ, dk := q.Shape()[0], q.Shape()[2], q.Shape()[3]
	group := a.Heads / a.KVHeads
	// q: [batch, kvHeads, group·lenQ, dk], a group's heads one after another.
	q = reshape(s, q, b, a.KVHeads, group*lenQ, dk)
	// weights = softmax(q·kᵀ / sqrt(dk) + mask): [batch, kvHeads, group·lenQ, lenK]
	weights := s.Softmax(s.BatchedMatMul(q, kv.K, false, true), groupMask(s, mask, group), 1/math.Sqrt(float64(dk)))
	s.Keep("weights", weights)
	// heads = weights·v: [batch, kvHeads, group·lenQ, dk], then [batch, lenQ, dModel]
	heads := s.BatchedMatMul(s.Dropout(weights, a.Dropout), kv.V, false, false)
	heads = s.MergeHeads(reshape(s, heads, b, a.Heads, lenQ, dk))
	return Linear{In: a.DModel, Out: a.DModel, NoBias: a.NoBias}.Apply(s.In("out_proj"), heads)
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

// reshape is s.Reshape unless x already has the shape.
func reshape(s *graph.Scope, x *G.Node, dims ...int) *G.Node {
	if x != nil && x.Shape().Eq(tensor.Shape(dims)) {
		return x
	}
	return s.Reshape(x, dims...)
}
