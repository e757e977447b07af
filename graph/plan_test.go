package graph_test

import (
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/model"
)

// TestModelPlanWithoutFirstRun checks the memory planned at compile time for
// whole models in float64, training (dropout on) and evaluation: the loss,
// every gradient and the log-probabilities must be equal bit for bit to those
// of the same program with every op writing a tensor of its own, run after
// run. A plan blind to Gorgonia's in-place gradient sums (see BlindPlan) must
// differ for at least one of them, so the check can fail.
func TestModelPlanWithoutFirstRun(t *testing.T) {
	base, err := model.Preset("tiny", 40)
	if err != nil {
		t.Fatal(err)
	}
	base.DModel, base.Heads, base.DFF = 16, 2, 24
	pre := base
	pre.PreNorm, pre.Norm, pre.Positions = true, "rms", "learned"
	models := []struct {
		name string
		new  func(model.Config) (model.Model, error)
		cfg  model.Config
	}{
		{"encoder-decoder, post-norm", func(c model.Config) (model.Model, error) { return model.New(c) }, base},
		{"encoder-decoder, pre-norm", func(c model.Config) (model.Model, error) { return model.New(c) }, pre},
		{"decoder-only", func(c model.Config) (model.Model, error) { return model.NewDecoderOnly(c) }, pre},
	}
	blindDiffers := false
	for _, tc := range models {
		t.Run(tc.name, func(t *testing.T) {
			m, err := tc.new(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			params, err := model.NewParams(m, tensor.Float64, rand.New(rand.NewPCG(1, 2)))
			if err != nil {
				t.Fatal(err)
			}
			b := patternBatch(model.Shape{Batch: 3, SrcLen: 7, TgtLen: 6}, tc.cfg.Vocab)
			pcg := rand.NewPCG(3, 4)
			train, err := model.CompileTrain(nil, m, params, b.Shape, rand.New(pcg))
			if err != nil {
				t.Fatal(err)
			}
			defer train.Close()
			eval, err := model.CompileEval(nil, m, params, b.Shape)
			if err != nil {
				t.Fatal(err)
			}
			defer eval.Close()
			run := func(p *graph.Program) map[string][]float64 {
				pcg.Seed(3, 4)
				return programResults(t, m, p, tensor.Float64, b, "")
			}
			for _, p := range []*graph.Program{train, eval} {
				graph.OwnMemory(p, true)
				want := run(p)
				graph.OwnMemory(p, false)
				for i := range 2 {
					if got := run(p); !maps.EqualFunc(got, want, slices.Equal) {
						t.Fatalf("planned run %d differs from a run with memory of its own per op", i+1)
					}
				}
				if err := graph.BlindPlan(p); err != nil {
					t.Fatal(err)
				}
				blindDiffers = blindDiffers || !maps.EqualFunc(run(p), want, slices.Equal)
			}
		})
	}
	if !blindDiffers {
		t.Error("plans blind to Gorgonia's in-place writes gave the same results: the check cannot fail")
	}
}

// programResults feeds b to p, runs it and returns copies of its loss
// ("loss", if it has one), its log-probabilities and target scores if it outputs them and
// its gradients, each name after prefix.
func programResults(t *testing.T, m model.Model, p *graph.Program, dt tensor.Dtype, b model.Batch, prefix string) map[string][]float64 {
	t.Helper()
	if err := m.Feed(p, b); err != nil {
		t.Fatal(err)
	}
	if err := p.Run(); err != nil {
		t.Fatal(err)
	}
	st := map[string][]float64{}
	if l, err := p.Loss(); err == nil { // a scoring program has none
		st[prefix+"loss"] = []float64{l}
	}
	for _, out := range []string{model.LogProbs, model.TargetScores} {
		if v := p.Output(out); v != nil {
			st[prefix+out] = graph.Float64s(v)
		}
	}
	for _, name := range p.ParamNames() {
		st[prefix+name] = graph.Float64s(p.Grad(name))
	}
	return st
}

// patternBatch is a full batch of non-reserved ids in a fixed pattern.
func patternBatch(sh model.Shape, vocab int) model.Batch {
	ids := func(n, k int) []int {
		s := make([]int, n)
		for i := range s {
			s[i] = 4 + (7*i+k)%(vocab-4)
		}
		return s
	}
	rows := sh.Batch * sh.TgtLen
	return model.Batch{Shape: sh, Src: ids(sh.Batch*sh.SrcLen, 1), TgtIn: ids(rows, 2), TgtOut: ids(rows, 3)}
}
