package layers

import (
	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"

	"github.com/transformer-go/transformer/graph"
)

// Stack is N layers, each in its own scope ("layers.0", "layers.1", …),
// and, if FinalNorm is not nil, a norm ("norm") after the last. Pre-norm
// stacks need the final norm; the paper's post-norm ones do not have it.
type Stack struct {
	N         int
	FinalNorm Norm
}

// Apply runs x [batch, len, dModel] through layer N times, each time in
// the layer's scope, then through the final norm. layer is any map of x to
// the same shape: an EncoderLayer's or DecoderLayer's Apply, or a layer of
// one's own.
func (st Stack) Apply(s *graph.Scope, x *G.Node, layer func(s *graph.Scope, x *G.Node) *G.Node) *G.Node {
	for i := range st.N {
		x = layer(s.In("layers", i), x)
	}
	return st.finish(s, x)
}

// step runs one new position x of an incremental decoder through the
// layers, layer i reading and updating caches[i], then the final norm.
func (st Stack) step(s *graph.Scope, x *G.Node, caches []KV, layer func(s *graph.Scope, i int, x *G.Node, cache KV) (*G.Node, KV)) (*G.Node, []KV) {
	if len(caches) != st.N {
		s.Fail(errors.Errorf("incremental step: %d caches for %d layers", len(caches), st.N))
		return nil, nil
	}
	out := make([]KV, st.N)
	for i := range st.N {
		x, out[i] = layer(s.In("layers", i), i, x, caches[i])
	}
	return st.finish(s, x), out
}

// finish applies the final norm, if any.
func (st Stack) finish(s *graph.Scope, x *G.Node) *G.Node {
	if st.FinalNorm == nil || s.Err() != nil {
		return x
	}
	return st.FinalNorm.Apply(s.In("norm"), x)
}
