package layers

import (
	G "gorgonia.org/gorgonia"

	"github.com/transformer-go/transformer/graph"
)

// The sublayers of an encoder or decoder layer are values of small
// interfaces: Attention, FFN and Norm (norm.go), beside the Positional
// encodings (positional.go) a model adds to its embeddings. The paper's
// are MultiHeadAttention, FeedForward and LayerNorm; a variant is another
// implementation, which a Registry can build by name.

// Attention is an attention sublayer. Apply attends from query [batch,
// lenQ, dModel] to keyValue [batch, lenK, dModel] under the additive mask
// ([batch or 1, 1, lenQ or 1, lenK], see PaddingMask and CausalMask, or nil)
// and returns [batch, lenQ, dModel]: self-attention when query and keyValue
// are the same node, cross-attention when keyValue is the encoder's output.
//
// Training and teacher-forced scoring need only Apply; incremental decoding
// needs an IncrementalAttention.
type Attention interface {
	Apply(s *graph.Scope, query, keyValue, mask *G.Node) *G.Node
}

// IncrementalAttention is an Attention that an incremental decoder can run
// one position at a time, keeping the keys and values of the positions
// before it in a cache (see MultiHeadAttention for the paper's).
type IncrementalAttention interface {
	Attention
	// Project computes the keys and values of x [batch, lenK, dModel],
	// each [batch, heads, lenK, dk] with CacheDims' heads and dk.
	Project(s *graph.Scope, x *G.Node) KV
	// Attend attends from query [batch, lenQ, dModel] to projected keys and
	// values, under mask as in Apply: Apply(q, x, mask) = Attend(q, Project(x), mask).
	Attend(s *graph.Scope, query *G.Node, kv KV, mask *G.Node) *G.Node
	// Cached is causal self-attention for the new position query [batch,
	// 1, dModel]: it writes the position's keys and values into slot
	// at.Index of cache ([batch, heads, maxLen, dk] each), attends to the
	// slots at.Mask leaves visible, and returns [batch, 1, dModel] and the
	// updated cache.
	Cached(s *graph.Scope, query *G.Node, cache KV, at Slot) (*G.Node, KV)
	// CacheDims are the heads and the size dk of each head of the keys and
	// values Project and Cached make.
	CacheDims() (heads, dk int)
}

// FFN is a position-wise sublayer: Apply maps x [..., dModel] to
// [..., dModel], each position on its own (FeedForward is the paper's).
type FFN interface {
	Apply(s *graph.Scope, x *G.Node) *G.Node
}
