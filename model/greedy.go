package model

import (
	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/graph"
)

// Greedy decodes each source (ids ending with EOSID) by taking the most
// probable token at every step, for at most maxLen tokens; the returned
// sequences stop before EOSID. Sources are decoded together in one batch.
func Greedy(m Model, params *graph.Params, srcs [][]int, maxLen int) ([][]int, error) {
	if len(srcs) == 0 || maxLen < 1 {
		return nil, errors.Errorf("greedy decoding of %d sources to length %d", len(srcs), maxLen)
	}
	sh := Shape{Batch: len(srcs), TgtLen: maxLen}
	for _, s := range srcs {
		sh.SrcLen = max(sh.SrcLen, len(s))
	}
	b := Batch{Shape: sh, Src: make([]int, sh.Batch*sh.SrcLen), TgtIn: make([]int, sh.Batch*maxLen), TgtOut: make([]int, sh.Batch*maxLen)}
	for i, s := range srcs {
		copy(b.Src[i*sh.SrcLen:], s)
		b.TgtIn[i*maxLen] = BOSID
	}
	p, err := CompileEval(m, params, sh)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	out := make([][]int, len(srcs))
	done := make([]bool, len(srcs))
	for t := range maxLen {
		if err := m.Feed(p, params.Dtype(), b); err != nil {
			return nil, err
		}
		if err := p.Run(); err != nil {
			return nil, err
		}
		lp := graph.Float64s(p.Output(LogProbs))
		vocab := len(lp) / (sh.Batch * maxLen)
		for i := range srcs {
			if done[i] {
				continue
			}
			at := (i*maxLen + t) * vocab
			tok := argmax(lp[at : at+vocab])
			if tok == EOSID {
				done[i] = true
				continue
			}
			out[i] = append(out[i], tok)
			if t+1 < maxLen {
				b.TgtIn[i*maxLen+t+1] = tok
			}
		}
	}
	return out, nil
}
