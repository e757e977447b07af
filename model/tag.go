package model

import (
	"fmt"
	"slices"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/graph"
)

// Tag predicts with a model whose Layout is Aligned (an encoder-only
// model, a tagger) the most probable target token at every position of
// each source: len(src) tokens for source src, whose ids (ending with
// EOSID, as it was trained) are within the vocabulary and at most the
// config's MaxLen. Sources are run in batches of up to batch rows, padded
// to the longest of each batch.
func Tag(rt *graph.Runtime, m Model, params *graph.Params, srcs [][]int, batch int) ([][]int, error) {
	if !m.Layout().Aligned {
		return nil, errors.Errorf("tagging needs a model that predicts a token at every source position (Layout.Aligned), have a model of kind %s", m.Config().Kind)
	}
	if batch < 1 {
		return nil, errors.Errorf("tagging needs batch ≥ 1, have %d", batch)
	}
	cfg := m.Config()
	progs := graph.NewPrograms()
	defer progs.Close()
	tags := make([][]int, 0, len(srcs))
	for start := 0; start < len(srcs); start += batch {
		b, err := tagBatch(cfg, srcs[start:min(start+batch, len(srcs))], start)
		if err != nil {
			return nil, err
		}
		need := cfg.ForwardBytes(int(params.Dtype().Size()), b.Batch, b.SrcLen, b.TgtLen)
		if err := rt.CheckMemory(fmt.Sprintf("tagging sources %d to %d", start+1, start+b.Batch), need); err != nil {
			return nil, errors.Errorf("%v; tag fewer sources at once, or shorter ones", err)
		}
		p, err := runBatch(rt, progs, m, params, b, CompileEval)
		if err != nil {
			return nil, err
		}
		lp := graph.Float64s(p.Output(LogProbs))
		dists := slices.Collect(slices.Chunk(lp, len(lp)/len(b.Src))) // [rows·len][vocab]
		for i, src := range srcs[start : start+b.Batch] {
			row := make([]int, len(src))
			for j := range row {
				row[j] = indexOfMax(dists[i*b.SrcLen+j])
			}
			tags = append(tags, row)
		}
	}
	return tags, nil
}

// tagBatch pads sources into a batch whose targets are the sources
// themselves (any ids do: Tag reads no loss); first is the index of the
// first, for errors.
func tagBatch(cfg Config, srcs [][]int, first int) (Batch, error) {
	for i, src := range srcs {
		if len(src) == 0 || len(src) > cfg.MaxLen {
			return Batch{}, errors.Errorf("source %d has %d tokens, want 1 to the model's max_len %d", first+i+1, len(src), cfg.MaxLen)
		}
		for j, id := range src {
			if id < 0 || id >= cfg.Vocab {
				return Batch{}, errors.Errorf("source %d, position %d: id %d is outside the vocabulary of %d", first+i+1, j+1, id, cfg.Vocab)
			}
		}
	}
	return NewBatch(srcs, nil, srcs, true), nil
}
