package graph_test

import (
	"maps"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/model"
)

// TestGoroutinesDoNotChangeResults trains, evaluates and scores whole
// models, dropout on, at GOMAXPROCS 1, 2 and 3: the loss, every gradient,
// the log-probabilities and the target scores must be equal bit for bit,
// since how a kernel's work is split must never change what it computes. The kernels' row, elementwise
// and reduction loops and the dropout masks are split into parts of as few
// as 64 elements, four per goroutine (so a split differs with GOMAXPROCS),
// and the larger matrix products into one band per goroutine.
func TestGoroutinesDoNotChangeResults(t *testing.T) {
	defer graph.SetGrain(graph.SetGrain(64))
	base, err := model.Preset("tiny", 200)
	if err != nil {
		t.Fatal(err)
	}
	base.DModel, base.Heads, base.DFF = 64, 4, 256
	pre := base
	pre.PreNorm, pre.Norm, pre.Positions = true, "rms", "learned"
	llama := pre
	llama.Kind, llama.Attention, llama.KVHeads, llama.Positions, llama.FFN = model.KindDecoderOnly, "rotary", 2, "none", "swiglu"
	for name, cfg := range map[string]model.Config{"post-norm": base, "pre-norm": pre, "decoder-only, rotary, grouped-query, SwiGLU": llama} {
		t.Run(name, func(t *testing.T) {
			var want map[string][]float64
			for _, procs := range []int{1, 2, 3} {
				got := trainAndEval(t, cfg, procs)
				if want == nil {
					want = got
					continue
				}
				if len(got) != len(want) || len(want) < 10 {
					t.Fatalf("GOMAXPROCS %d: %d results, %d at GOMAXPROCS 1", procs, len(got), len(want))
				}
				for k, w := range want {
					if !slices.Equal(got[k], w) {
						t.Fatalf("GOMAXPROCS %d: %s differs from GOMAXPROCS 1", procs, k)
					}
				}
			}
		})
	}
}

// trainAndEval runs one training step and one evaluation of cfg's model in
// float32, on a 16×32 batch, at GOMAXPROCS procs, and returns the loss,
// gradients and log-probabilities.
func trainAndEval(t *testing.T, cfg model.Config, procs int) map[string][]float64 {
	t.Helper()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	m, err := model.FromConfig(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	params, err := model.NewParams(m, tensor.Float32, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	b := patternBatch(model.Shape{Batch: 16, SrcLen: 32, TgtLen: 32}, cfg.Vocab)
	if cfg.Kind == model.KindDecoderOnly {
		b.Shape.SrcLen, b.Src = 0, nil
	}
	train, err := model.CompileTrain(nil, m, params, b.Shape, rand.New(rand.NewPCG(3, 4)))
	if err != nil {
		t.Fatal(err)
	}
	defer train.Close()
	eval, err := model.CompileEval(nil, m, params, b.Shape)
	if err != nil {
		t.Fatal(err)
	}
	defer eval.Close()
	score, err := model.CompileScore(nil, m, params, b.Shape)
	if err != nil {
		t.Fatal(err)
	}
	defer score.Close()
	// Each program's results are read before the next runs, which reuses
	// the arena they lie in.
	st := programResults(t, m, train, tensor.Float32, b, "training ")
	maps.Copy(st, programResults(t, m, eval, tensor.Float32, b, "evaluation "))
	maps.Copy(st, programResults(t, m, score, tensor.Float32, b, "scoring "))
	return st
}
