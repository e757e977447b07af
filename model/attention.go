package model

import (
	"slices"

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
	progs := graph.NewPrograms()
	defer progs.Close()
	p, err := runBatch(rt, progs, m, params, b, CompileEval)
	if err != nil {
		return nil, err
	}
	w := p.Output(name + ".weights") // [1, heads, lenQ, lenK]
	if w == nil {
		return nil, errors.Errorf("the model has no attention %s", name)
	}
	sh := w.Shape()
	rows := slices.Collect(slices.Chunk(graph.Float64s(w), sh[3]))
	return slices.Collect(slices.Chunk(rows, sh[2])), nil
}
