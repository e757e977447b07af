package model

import (
	"github.com/pkg/errors"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/layers/ops"
)

// SrcEmbeddings names an encoder-decoder's source embeddings [batch, lenS,
// dModel], before the positions are added: graph.GradWRT(SrcEmbeddings)
// differentiates a graph's loss by them (graph.Program.InputGrad).
const SrcEmbeddings = "src_embed"

// saliencyTarget names the input that picks the scored target token.
const saliencyTarget = "saliency_target"

// Saliency is a saliency map: the gradient of log p(y_t | y_<t, x), the
// log-probability an encoder-decoder m gives target token t, with respect
// to the embeddings of the source x as the encoder reads it, ended with
// EOSID: [len(src)+1, dModel], the last row EOSID's ([len(src), dModel] if
// src already ends with EOSID, which is not added twice, as Decode does).
// Each row says how that source position's embedding sways the token; its
// norm, or its dot product with the embedding (gradient × input), ranks
// the source positions. tgt is the target's ids without BOSID or EOSID,
// and t counts from 0, len(tgt) being the final EOSID. An empty source is
// an error.
func Saliency(rt *graph.Runtime, m Model, params *graph.Params, src, tgt []int, t int) (*tensor.Dense, error) {
	if l := m.Layout(); !l.Sources || l.Aligned {
		return nil, errors.Errorf("a saliency map needs an encoder-decoder, whose sources are embedded; have a model of kind %s", m.Config().Kind)
	}
	if len(src) == 0 {
		return nil, errors.New("a saliency map needs a source, have an empty one")
	}
	src = Ended(src)
	if t < 0 || t > len(tgt) {
		return nil, errors.Errorf("target position %d: want 0 to %d", t, len(tgt))
	}
	sh := Shape{Batch: 1, SrcLen: len(src), TgtLen: len(tgt) + 1}
	s := graph.NewScope(params, graph.GradWRT(SrcEmbeddings))
	_, logp := m.Build(s, sh)
	pick := s.Input(saliencyTarget, tensor.Int, 1, sh.TgtLen)
	nll := ops.SmoothedCrossEntropy(s, logp, pick, 0, PadID) // −log p(y_t): every other position is padding
	p, err := graph.Compile(rt, s, nll, nil)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	b := Batch{Shape: sh, Src: src, TgtIn: append([]int{BOSID}, tgt...), TgtOut: append(append([]int(nil), tgt...), EOSID)}
	picked := make([]int, sh.TgtLen)
	picked[t] = b.TgtOut[t]
	err = p.Set(saliencyTarget, picked)
	if err == nil {
		err = m.Feed(p, b)
	}
	if err == nil {
		err = p.Run()
	}
	if err != nil {
		return nil, err
	}
	g := graph.Float64s(p.InputGrad(SrcEmbeddings))
	for i := range g {
		g[i] = -g[i] // ∂ log p = −∂ nll
	}
	return graph.FromFloat64s(params.Dtype(), g, sh.SrcLen, m.Config().DModel), nil
}
