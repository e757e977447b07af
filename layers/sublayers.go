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
// Apply with a Cache, which only an IncrementalAttention makes.
type Attention interface {
	Apply(s *graph.Scope, query, keyValue, mask *G.Node, cache *Cache) *G.Node
}

// IncrementalAttention is an Attention that decodes incrementally: it
// makes the caches its Apply reads.
type IncrementalAttention interface {
	Attention
	// Cache declares, in s, its self-attention's cache of rows rows at the
	// decoding step at, which c carries from step to step.
	Cache(s *graph.Scope, c Carrier, at *Slot, rows int) *Cache
	// Memory projects memory [batch, lenS, dModel], the encoder's output,
	// to the cache its cross-attention reads, made once per batch of
	// sources.
	Memory(s *graph.Scope, memory *G.Node) *Cache
}

// Cache is what an attention reads in incremental decoding instead of the
// keys and values of its keyValue: K and V, [batch, positions, kvHeads·dk]
// each, the heads side by side. Self-attention's (IncrementalAttention.Cache)
// has a slot At and holds the positions before: Apply writes the new
// position's keys and values into slot At.Index, attends to the result and
// hands it to the Carrier that made the cache, for the next step.
// Cross-attention's (IncrementalAttention.Memory) has no slot and holds the
// encoder output's, read as they are.
type Cache struct {
	K, V  *G.Node
	At    *Slot
	carry Carrier
}

// Carrier carries values from one decoding step to the next: a step
// program reads each value as the step before left it and gives its next
// value, which the decoder hands back to the step after (each row that of
// its parent, the beams' backpointers).
type Carrier interface {
	// Carried declares the value name in s, of the given shape [rows, …],
	// and returns what the step reads of it.
	Carried(s *graph.Scope, name string, shape ...int) *G.Node
	// Update gives the value of carried, a node Carried returned, at the
	// next step.
	Update(carried, next *G.Node)
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
