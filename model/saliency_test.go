package model_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/internal/modeltest"
	"github.com/transformer-go/transformer/model"
)

// TestSaliency checks the saliency map against finite differences: with
// learned positions, source position i's embedding and encoder position
// row i are added, so the gradient of log p(y_t) with respect to one is
// its gradient with respect to the other, a parameter that can be
// perturbed.
func TestSaliency(t *testing.T) {
	cfg := modeltest.Configs()["pre-norm, rms, learned positions"]
	m, params := modeltest.Model(t, cfg, 5, 1)
	modeltest.Sharpen(params, 2)
	src, tgt := []int{5, 9, 7, 12}, []int{6, 8, 11}
	pos := params.Value("encoder.pos.weight").Data().([]float64)
	logp := func(step int) float64 {
		p, err := model.CompileEval(nil, m, params, model.Shape{Batch: 1, SrcLen: len(src) + 1, TgtLen: len(tgt) + 1})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		b := model.Batch{Shape: model.Shape{Batch: 1, SrcLen: len(src) + 1, TgtLen: len(tgt) + 1}, Src: append(append([]int(nil), src...), model.EOSID),
			TgtIn: append([]int{model.BOSID}, tgt...), TgtOut: append(append([]int(nil), tgt...), model.EOSID)}
		if err := m.Feed(p, b); err != nil {
			t.Fatal(err)
		}
		if err := p.Run(); err != nil {
			t.Fatal(err)
		}
		return graph.Float64s(p.Output(model.LogProbs))[step*cfg.Vocab+b.TgtOut[step]]
	}
	for _, step := range []int{0, 2, 3} {
		sal, err := model.Saliency(nil, m, params, src, tgt, step)
		if err != nil {
			t.Fatal(err)
		}
		if !sal.Shape().Eq([]int{len(src) + 1, cfg.DModel}) {
			t.Fatalf("shape %v", sal.Shape())
		}
		g := graph.Float64s(sal)
		const h = 1e-6
		for _, i := range []int{0, 3, 4} { // source positions, the last one EOS
			for _, j := range []int{0, 7, cfg.DModel - 1} {
				k := i*cfg.DModel + j
				orig := pos[k]
				pos[k] = orig + h
				up := logp(step)
				pos[k] = orig - h
				down := logp(step)
				pos[k] = orig
				fd := (up - down) / (2 * h)
				if math.Abs(fd-g[k]) > 1e-6*(1+math.Abs(fd)) {
					t.Errorf("step %d, source position %d, dim %d: saliency %.10g, finite differences %.10g", step, i, j, g[k], fd)
				}
			}
		}
	}
	withEOS, err := model.Saliency(nil, m, params, append(src, model.EOSID), tgt, 1)
	without, err2 := model.Saliency(nil, m, params, src, tgt, 1)
	if err != nil || err2 != nil || !slices.Equal(graph.Float64s(withEOS), graph.Float64s(without)) {
		t.Errorf("a source with and without EOS: %v, %v", err, err2)
	}
	if _, err := model.Saliency(nil, m, params, src, tgt, 4); err == nil || !strings.Contains(err.Error(), "target position 4: want 0 to 3") {
		t.Errorf("a position past the target: %v", err)
	}
	lm, lmParams := modeltest.Model(t, modeltest.Configs()["decoder-only, post-norm"], 5, 1)
	if _, err := model.Saliency(nil, lm, lmParams, src, tgt, 0); err == nil || !strings.Contains(err.Error(), "needs an encoder-decoder") {
		t.Errorf("a decoder-only model: %v", err)
	}
}

// TestSaliencyRows: the map has a row per source token and one for EOSID,
// as documented, and an empty source is an error.
func TestSaliencyRows(t *testing.T) {
	cfg := modeltest.Configs()["post-norm, sinusoidal"]
	m, params := modeltest.Model(t, cfg, 5, 1)
	src := []int{5, 9, 7}
	sal, err := model.Saliency(nil, m, params, src, []int{6, 8}, 1)
	if err != nil || !sal.Shape().Eq([]int{len(src) + 1, cfg.DModel}) {
		t.Fatalf("saliency of %d tokens: %v, %v, want [%d, %d]", len(src), sal, err, len(src)+1, cfg.DModel)
	}
	if _, err := model.Saliency(nil, m, params, nil, []int{6, 8}, 1); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("an empty source: %v, want an error", err)
	}
}
