package trainer

import (
	"path/filepath"
	"slices"
	"time"

	"github.com/transformer-go/transformer/data"
	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/model"
)

// decodeBatch is how many held-out examples are decoded together.
const decodeBatch = 128

// Evaluate scores the validation batches with an evaluation graph (no dropout,
// no gradients, so training state is untouched).
func (t *Trainer) Evaluate() (model.Scores, error) {
	var total model.Scores
	for _, b := range t.data.Valid {
		mb := toModel(b)
		p, err := t.eval.Get(mb.Shape.String(), func() (*graph.Program, error) {
			return model.CompileEval(t.m, t.params, mb.Shape)
		})
		if err != nil {
			return total, err
		}
		if err := t.m.Feed(p, t.params.Dtype(), mb); err != nil {
			return total, err
		}
		if err := p.Run(); err != nil {
			return total, err
		}
		total.Add(model.Score(p.Output(model.LogProbs), mb))
	}
	return total, nil
}

// ExactMatch is the fraction of held-out examples whose greedy decode equals
// the target.
func (t *Trainer) ExactMatch() (float64, error) {
	ex := t.data.HeldOut
	right := 0
	for start := 0; start < len(ex); start += decodeBatch {
		part := ex[start:min(start+decodeBatch, len(ex))]
		srcs := make([][]int, len(part))
		longest := 0
		for i, e := range part {
			srcs[i] = append(slices.Clone(e.Src), data.EOSID)
			longest = max(longest, len(e.Tgt))
		}
		outs, err := model.Greedy(t.m, t.params, srcs, longest+2)
		if err != nil {
			return 0, err
		}
		for i, e := range part {
			if slices.Equal(outs[i], e.Tgt) {
				right++
			}
		}
	}
	return float64(right) / float64(max(len(ex), 1)), nil
}

// evaluateAndLog evaluates, appends the metrics and keeps the best checkpoint.
func (t *Trainer) evaluateAndLog() error {
	sc, err := t.Evaluate()
	if err != nil {
		return err
	}
	now := time.Now()
	t.elapsed += now.Sub(t.window.start)
	m := Metrics{
		Step: t.adam.Step, TrainLoss: t.window.loss / float64(max(t.window.steps, 1)),
		ValLoss: sc.Loss(), ValPPL: sc.Perplexity(), ValAcc: sc.Accuracy(),
		LR: t.sched.At(t.adam.Step), TokensPerS: t.window.rate(), ElapsedS: t.elapsed.Seconds(),
	}
	if len(t.data.HeldOut) > 0 {
		em, err := t.ExactMatch()
		if err != nil {
			return err
		}
		m.ExactMatch = &em
	}
	if err := appendMetrics(filepath.Join(t.opt.OutDir, "metrics.jsonl"), m); err != nil {
		return err
	}
	t.rep.Eval(m)
	if m.ValLoss < t.best {
		t.best = m.ValLoss
		if err := model.SaveCheckpoint(filepath.Join(t.opt.OutDir, "best.safetensors"), t.m.Config(), t.params, t.meta()); err != nil {
			return err
		}
	}
	t.window = window{start: time.Now()}
	return nil
}
