package layers

import (
	G "gorgonia.org/gorgonia"

	"github.com/transformer-go/transformer/graph"
)

// Attention is an attention sublayer. Apply attends from query [batch,
// lenQ, dModel] to keyValue [batch, lenK, dModel] under the additive mask
// ([batch or 1, 1, lenQ or 1, lenK], see PaddingMask and CausalMask, or nil)
// and returns [batch, lenQ, dModel]: self-attention when query and keyValue
// are the same node, cross-attention when keyValue is the encoder's output.
//
// Training and scoring pass no cache. Incremental decoding runs the same
// Apply with a Cache, which only an IncrementalAttention takes.
type Attention interface {
	Apply(s *graph.Scope, query, keyValue, mask *G.Node, cache *Cache) *G.Node
}

// IncrementalAttention is an Attention whose Apply takes a Cache (see
// MultiHeadAttention.Apply for what it does with one).
type IncrementalAttention interface {
	Attention
	// CacheDims are the heads and the size dk of each head of the keys and
	// values in its Cache, [batch, heads, positions, dk].
	CacheDims() (heads, dk int)
}

// Cache is an attention's state in incremental decoding: the keys and
// values K and V, [batch, heads, positions, dk] each. With a slot At
// (self-attention) they are the positions so far, which Apply extends with
// the new position's and replaces by the result; without one
// (cross-attention) they are the encoder output's, projected once.
type Cache struct {
	K, V *G.Node
	At   *Slot
}

// Slot is where an incremental decoding step writes in the self-attention
// caches. Index, an int [1], is the new position t; Mask, additive and
// [batch or 1, 1, 1, maxLen], is 0 for the slots up to t and -Inf after
// (StepMask).
type Slot struct{ Index, Mask *G.Node }

// FFN is a position-wise sublayer: Apply maps x [..., dModel] to
// [..., dModel], each position on its own (FeedForward is the paper's).
type FFN interface {
	Apply(s *graph.Scope, x *G.Node) *G.Node
}
