package model

import (
	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/graph"
)

// Attention returns the weights of the named attention sublayer
// ("decoder.layers.1.cross_attn", "encoder.layers.0.self_attn") for the
// source src (ids ending with EOSID) and an output out (ids without BOSID
// and EOSID, such as a decode.Hypothesis's Tokens), teacher-forced: the evaluation
// program (CompileEval) runs on the pair, decoder input BOS out. The result
// is [heads][lenQ][lenK]; for cross-attention query i is the decoder position
// that predicts out[i] (EOSID for i = len(out)) and key j is src[j]. (A
// decoder-only model's positions are BOSID, src, then out: its queries and
// keys count them all.)
func Attention(rt *graph.Runtime, m Model, params *graph.Params, src, out []int, name string) ([][][]float64, error) {
	tgt := append(append([]int{BOSID}, out...), EOSID)
	b, err := teacherForced(m, [][]int{src}, [][]int{tgt}, 0)
	if err != nil {
		return nil, err
	}
	p, err := CompileEval(rt, m, params, b.Shape)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	if err := runBatch(p, m, params.Dtype(), b); err != nil {
		return nil, err
	}
	w := p.Output(name + ".weights")
	if w == nil {
		return nil, errors.Errorf("the model has no attention %s", name)
	}
	// w: [1, heads, lenQ, lenK]
	s, vals := w.Shape(), graph.Float64s(w)
	heads, lenQ, lenK := s[1], s[2], s[3]
	maps := make([][][]float64, heads)
	for h := range maps {
		maps[h] = make([][]float64, lenQ)
		for i := range maps[h] {
			at := (h*lenQ + i) * lenK
			maps[h][i] = vals[at : at+lenK]
		}
	}
	return maps, nil
}
