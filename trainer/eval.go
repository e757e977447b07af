package trainer

import (
	"math"
	"path/filepath"
	"time"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/model"
	"github.com/transformer-go/transformer/model/checkpoint"
	"github.com/transformer-go/transformer/model/decode"
)

// decodeBatch is how many held-out examples are decoded together.
const decodeBatch = 128

// Evaluate scores the validation batches with an evaluation graph (no dropout,
// no gradients, so training state is untouched). The batches' products
// share each weight packed once by the runtime (graph.Runtime).
func (t *Trainer) Evaluate() (model.Scores, error) {
	var total model.Scores
	for _, b := range t.data.Valid {
		sc, err := model.ScoreBatch(t.rt, t.eval, t.m, t.params, ModelBatch(b))
		if err != nil {
			return total, err
		}
		total.Add(sc)
	}
	return total, nil
}

// decode decodes srcs with the model's current parameters.
func (t *Trainer) decode(srcs [][]int, s decode.Search) ([][]decode.Hypothesis, error) {
	d, err := decode.New(t.rt, t.m, t.params)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Decode(srcs, s)
}

// evaluateAndLog evaluates, appends the metrics and keeps the best checkpoint.
func (t *Trainer) evaluateAndLog() error {
	if !t.world().Root() { // rank 0 alone evaluates, logs and keeps the best
		t.elapsed += time.Since(t.window.start)
		t.window = window{start: time.Now()}
		return nil
	}
	sc, err := t.Evaluate()
	if err != nil {
		return err
	}
	if l := sc.Loss(); math.IsNaN(l) || math.IsInf(l, 0) {
		return errors.Errorf("step %d: the validation loss is %v; stopping. %s", t.adam.Step, l, t.lastGood())
	}
	now := time.Now()
	t.elapsed += now.Sub(t.window.start)
	m := Metrics{
		Step: t.adam.Step, TrainLoss: t.window.loss / float64(max(t.window.steps, 1)),
		ValLoss: sc.Loss(), ValPPL: perplexity(sc.Loss()), ValAcc: sc.Accuracy(),
		LR: t.sched.At(t.adam.Step), TokensPerS: t.window.rate(), ElapsedS: t.elapsed.Seconds(),
	}
	if err := t.decodingMetrics(&m); err != nil {
		return err
	}
	if err := t.checkDir(); err != nil {
		return err
	}
	if err := appendMetrics(filepath.Join(t.opt.OutDir, "metrics.jsonl"), m); err != nil {
		return t.moved(err)
	}
	t.rep.Eval(m)
	if err := t.keepBest(m); err != nil {
		return err
	}
	t.window = window{start: time.Now()}
	return nil
}

// decodingMetrics adds to m the exact match of the held-out examples and,
// when due, the BLEU of the BLEU sample.
func (t *Trainer) decodingMetrics(m *Metrics) error {
	if len(t.data.HeldOut) > 0 {
		em, err := t.ExactMatch()
		if err != nil {
			return err
		}
		m.ExactMatch = &em
	}
	if t.bleuDue() {
		b, err := t.BLEU()
		if err != nil {
			return err
		}
		m.BLEU = &b
	}
	return nil
}

// keepBest saves best.safetensors when the evaluation m is the best so far:
// the lowest validation loss or, with BLEUSample.KeepBest, the highest BLEU.
// BLEU is kept negated in t.best (and in the checkpoints' trainer state) so
// that for both lower is better.
func (t *Trainer) keepBest(m Metrics) error {
	value := m.ValLoss
	if b := t.data.BLEU; b != nil && b.KeepBest {
		if m.BLEU == nil {
			return nil
		}
		value = -*m.BLEU
	}
	t.patience.observe(value < t.best)
	if value >= t.best {
		return nil
	}
	t.best = value
	if err := t.checkDir(); err != nil {
		return err
	}
	return t.moved(checkpoint.Save(filepath.Join(t.opt.OutDir, "best.safetensors"), t.m.Config(), t.params, t.meta()))
}

// logStep appends the loss of the update just made to metrics.jsonl, as
// Options.LogEvery asks (on rank 0).
func (t *Trainer) logStep() error {
	if !t.world().Root() {
		return nil
	}
	if err := t.checkDir(); err != nil {
		return err
	}
	line := stepLine{Step: t.adam.Step, StepLoss: t.stepLoss, LR: t.sched.At(t.adam.Step)}
	return t.moved(appendMetrics(filepath.Join(t.opt.OutDir, "metrics.jsonl"), line))
}

// perplexity is exp(loss), at most math.MaxFloat64: a finite loss above
// 709.78 overflows exp, and a metric is never a number JSON cannot hold.
func perplexity(loss float64) float64 {
	return min(math.Exp(loss), math.MaxFloat64)
}
