package layers

import (
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
)

// Embedding maps token ids to learned vectors of size DModel. As in the paper
// (section 3.4), one matrix serves the source and target embeddings and the
// pre-softmax projection, and the embeddings are multiplied by sqrt(dModel).
type Embedding struct {
	Vocab, DModel int
}

// NewEmbedding returns an embedding of vocab tokens into dModel dimensions.
func NewEmbedding(vocab, dModel int) Embedding { return Embedding{Vocab: vocab, DModel: dModel} }

// weight is the table E [vocab, dModel], drawn from N(0, 1/dModel) so that the
// scaled embeddings start with unit variance.
func (e Embedding) weight(s *graph.Scope) *G.Node {
	return s.Param("weight", tensor.Shape{e.Vocab, e.DModel}, graph.Normal(1/math.Sqrt(float64(e.DModel))))
}

// Apply embeds ids [batch, len] as sqrt(dModel)·E[ids]: [batch, len, dModel].
func (e Embedding) Apply(s *graph.Scope, ids *G.Node) *G.Node {
	return s.Embed(e.weight(s), ids, math.Sqrt(float64(e.DModel)))
}

// Logits projects x [..., dModel] onto the vocabulary with the same matrix:
// x·Eᵀ, [..., vocab].
func (e Embedding) Logits(s *graph.Scope, x *G.Node) *G.Node {
	return s.MatMul(x, e.weight(s), true)
}
