package model

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gorgonia.org/tensor"
)

// TestTag checks that Tag gives, at every source position, the most probable
// token of the evaluation program's log-probabilities, the same whether the
// sources run one at a time or padded together, and refuses what it cannot
// tag.
func TestTag(t *testing.T) {
	cfg := smallConfig()
	m, err := NewEncoderOnly(cfg)
	if err != nil {
		t.Fatal(err)
	}
	params, err := NewParams(m, tensor.Float64, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	srcs := [][]int{{5, 6, 7, EOSID}, {8, EOSID}, {9, 10, 4, 5, 6, EOSID}}
	together, err := Tag(nil, m, params, srcs, 3)
	if err != nil {
		t.Fatal(err)
	}
	for i, src := range srcs {
		alone, err := Tag(nil, m, params, srcs[i:i+1], 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(together[i]) != len(src) || !slices.Equal(alone[0], together[i]) {
			t.Errorf("source %d: tags %v alone, %v in a batch", i+1, alone[0], together[i])
		}
		b := Batch{Shape: Shape{Batch: 1, SrcLen: len(src), TgtLen: len(src)}, Src: src, TgtIn: make([]int, len(src)), TgtOut: src}
		p, err := CompileEval(nil, m, params, b.Shape)
		if err == nil {
			err = m.Feed(p, b)
		}
		if err == nil {
			err = p.Run()
		}
		if err != nil {
			t.Fatal(err)
		}
		lp := p.Output(LogProbs).Data().([]float64)
		for j := range src {
			if best := indexOfMax(lp[j*cfg.Vocab : (j+1)*cfg.Vocab]); best != together[i][j] {
				t.Errorf("source %d, position %d: tag %d, most probable %d", i+1, j+1, together[i][j], best)
			}
		}
		// Scoring the tags as targets: the sum of their log-probabilities.
		tgt := append(append([]int{BOSID}, together[i][:len(src)-1]...), EOSID)
		want := 0.0
		for j, id := range tgt[1:] {
			want += lp[j*cfg.Vocab+id]
		}
		score, err := ScorePairs(nil, m, params, srcs[i:i+1], [][]int{tgt}, 1)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(score[0]-want) > 1e-9 {
			t.Errorf("source %d: ScorePairs %g, log-probabilities sum to %g", i+1, score[0], want)
		}
		p.Close()
	}
	lm, _ := NewDecoderOnly(cfg)
	for _, tc := range []struct {
		m    Model
		srcs [][]int
		want string
	}{
		{lm, srcs, "tagging needs a model that predicts a token at every source position"},
		{m, [][]int{{5}, {}}, "source 2 has 0 tokens"},
		{m, [][]int{{5, 11}}, "source 1, position 2: id 11 is outside the vocabulary of 11"},
	} {
		if _, err := Tag(nil, tc.m, params, tc.srcs, 2); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want one saying %q", err, tc.want)
		}
	}
}
