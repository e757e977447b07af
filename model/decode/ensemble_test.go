package decode

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/internal/modeltest"
	"github.com/transformer-go/transformer/model"
)

// TestEnsembleMatchesUncached decodes greedily with an ensemble of two
// models of different weights and checks its tokens and log-probabilities
// against the mean of the two distributions computed on whole prefixes,
// and that the ensemble's choice is neither member's alone somewhere.
func TestEnsembleMatchesUncached(t *testing.T) {
	for name, cfg := range modeltest.Configs() {
		m1, p1 := modeltest.Model(t, cfg, 2, 1)
		m2, p2 := modeltest.Model(t, cfg, 3, 1)
		modeltest.Sharpen(p1, 2)
		modeltest.Sharpen(p2, 2)
		members := []Member{{m1, p1}, {m2, p2}}
		srcs := modeltest.Sources(cfg.Vocab, 9, 5)
		want, err := uncachedEnsemble(members, srcs, 10)
		if err != nil {
			t.Fatal(err)
		}
		// One runtime: the members' outputs must not share its memory.
		got := decodeEnsemble(t, graph.CPU(), srcs, Search{Method: MethodGreedy, MaxLen: 10, Batch: 4}, members...)
		var alone [][]Hypothesis
		for _, mb := range members {
			hyps, err := uncachedGreedy(mb.Model, mb.Params, srcs, 10)
			if err != nil {
				t.Fatal(err)
			}
			alone = append(alone, hyps)
		}
		differs := false
		for i := range srcs {
			g := got[i][0]
			if !slices.Equal(g.Tokens, want[i].Tokens) || math.Abs(g.LogProb-want[i].LogProb) > 1e-10*(1+math.Abs(g.LogProb)) {
				t.Fatalf("%s, source %d: ensemble %v (%g), uncached mean %v (%g)", name, i, g.Tokens, g.LogProb, want[i].Tokens, want[i].LogProb)
			}
			for _, hyps := range alone {
				differs = differs || !slices.Equal(hyps[i].Tokens, g.Tokens)
			}
		}
		if !differs {
			t.Errorf("%s: the ensemble decodes as each of its models does; the test does not see the mean", name)
		}
	}
}

// TestEnsembleOfOneModelTwice beam-searches with a model twice over, whose
// mean is the model's own distribution: the hypotheses are the model's,
// with its scores (to rounding), though each member's caches are
// reordered by the beams' backpointers on its own.
func TestEnsembleOfOneModelTwice(t *testing.T) {
	for name, cfg := range modeltest.Configs() {
		m, params := modeltest.Model(t, cfg, 4, 3)
		srcs := modeltest.Sources(cfg.Vocab, 5, 6)
		s := Search{Method: MethodBeam, Beam: 3, NBest: 3, Alpha: 0.6, MaxLen: 8, Batch: 2}
		want := decodeOn(t, nil, m, params, srcs, s)
		got := decodeEnsemble(t, graph.CPU(), srcs, s, Member{m, params}, Member{m, cloneParams(t, m, params, params.Dtype())})
		for i := range srcs {
			for j := range want[i] {
				g, w := got[i][j], want[i][j]
				if !slices.Equal(g.Tokens, w.Tokens) || math.Abs(g.Score-w.Score) > 1e-12*(1+math.Abs(w.Score)) {
					t.Fatalf("%s, source %d, hypothesis %d: twice %v (%g), once %v (%g)", name, i, j, g.Tokens, g.Score, w.Tokens, w.Score)
				}
			}
		}
	}
}

// TestEnsembleRefusesMismatches checks that models which cannot decode
// together are refused, with the member named.
func TestEnsembleRefusesMismatches(t *testing.T) {
	cfgs := modeltest.Configs()
	var encDec, decOnly model.Config
	for _, cfg := range cfgs {
		if cfg.Kind == model.KindDecoderOnly {
			decOnly = cfg
		} else {
			encDec = cfg
		}
	}
	other := encDec
	other.Vocab += 5
	m1, p1 := modeltest.Model(t, encDec, 1, 1)
	tests := []struct {
		cfg  model.Config
		want string
	}{
		{decOnly, "model 2 of the ensemble is of kind decoder-only, the first of kind encoder-decoder"},
		{other, "model 2 of the ensemble has a vocabulary of 45 tokens, the first 40"},
	}
	for _, tc := range tests {
		m2, p2 := modeltest.Model(t, tc.cfg, 1, 1)
		if _, err := NewEnsemble(nil, Member{m1, p1}, Member{m2, p2}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewEnsemble: %v, want an error saying %q", err, tc.want)
		}
	}
	if _, err := NewEnsemble(nil); err == nil {
		t.Error("NewEnsemble of no model: no error")
	}
}

func TestMeanProbs(t *testing.T) {
	inf := math.Inf(-1)
	tests := []struct {
		each [][]float64
		want []float64
	}{
		{[][]float64{{math.Log(0.2), math.Log(0.8)}, {math.Log(0.6), math.Log(0.4)}}, []float64{math.Log(0.4), math.Log(0.6)}},
		{[][]float64{{inf, 0}, {math.Log(0.5), math.Log(0.5)}}, []float64{math.Log(0.25), math.Log(0.75)}},
		{[][]float64{{inf, -1000}, {inf, -1001}}, []float64{inf, -1000 + math.Log((1+math.Exp(-1))/2)}},
	}
	for _, tc := range tests {
		got := meanProbs(nil, tc.each)
		for i := range got {
			if got[i] != tc.want[i] && math.Abs(got[i]-tc.want[i]) > 1e-12 {
				t.Errorf("meanProbs(%v) = %v, want %v", tc.each, got, tc.want)
				break
			}
		}
	}
}
