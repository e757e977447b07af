package ops

import (
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
)

// TestTargetScores checks TargetScores against LogSoftmax read at the
// targets, in both element types and on rows long enough for the vector
// kernels: a pad row, a target that is the largest logit, one that ties
// with an earlier largest logit (not the most probable token, as the first
// index wins), and one that ties with a later one.
func TestTargetScores(t *testing.T) {
	const rows, vocab = 5, 100
	x := make([]float64, rows*vocab)
	for i := range x {
		x[i] = float64((i*37)%101)/10 - 5
	}
	targets := []int{7, 0, 42, 61, 3} // row 1 is padding
	x[0*vocab+7] = 9                  // row 0: the target is the largest
	x[2*vocab+10], x[2*vocab+42] = 9, 9
	x[3*vocab+61], x[3*vocab+80] = 9, 9
	wantBest := []float64{1, 0, 0, 1, 0}
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		params := newTestParams(t, dt)
		s := graph.NewScope(params, graph.Scoring())
		logits := s.Constant("x", graph.FromFloat64s(dt, x, rows, vocab))
		tg := s.Input("targets", tensor.Int, rows)
		p, err := graph.Compile(nil, s, nil, map[string]*G.Node{"scores": TargetScores(s, logits, tg, 0), "logp": s.LogSoftmax(logits)})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Set("targets", targets); err != nil {
			t.Fatal(err)
		}
		if err := p.Run(); err != nil {
			t.Fatal(err)
		}
		got, logp := graph.Float64s(p.Output("scores")), graph.Float64s(p.Output("logp"))
		want := make([]float64, 0, 2*rows)
		for i, tgt := range targets {
			lp := logp[i*vocab+tgt]
			if tgt == 0 {
				lp = 0
			}
			want = append(want, lp, wantBest[i])
		}
		tol := 1e-12
		if dt == tensor.Float32 {
			tol = 1e-5
		}
		assertClose(t, dt.String()+" scores", got, want, tol)
		if err := p.Set("targets", []int{1, 2, 3, 4, vocab}); err != nil {
			t.Fatal(err)
		}
		if err := p.Run(); err == nil || !strings.Contains(err.Error(), "outside the vocabulary") {
			t.Errorf("%v: target %d of %d: error %v, want one naming the vocabulary", dt, vocab, vocab, err)
		}
		p.Close()
	}
}
