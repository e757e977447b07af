package trainer

import (
	"fmt"
)

// patience counts the evaluations since the best one, for early stopping
// (Options.Patience).
type patience struct {
	// limit is Options.Patience: evaluations in a row without improvement
	// after which a run stops (0: never).
	limit int
	// stale is the evaluations since the best, on rank 0; a run's state
	// records it, so that a resumed run stops where one never stopped
	// would.
	stale int
	// stopped says why Run stopped before Options.Steps ("": it did not).
	stopped string
}

// observe records an evaluation of the measure best.safetensors is kept by
// (see keepBest): better or not.
func (p *patience) observe(better bool) {
	if better {
		p.stale = 0
		return
	}
	p.stale++
}

// spent reports whether the run has waited Options.Patience evaluations
// for an improvement.
func (p *patience) spent() bool { return p.limit > 0 && p.stale >= p.limit }

// stopEarly reports, after the evaluation of the current step, whether the
// run stops for want of improvement: rank 0 decides and every rank hears
// it, so that all stop at the same step. It says why in Stopped.
func (t *Trainer) stopEarly() (bool, error) {
	if t.patience.limit == 0 {
		return false, nil
	}
	stop := []float64{0}
	if t.patience.spent() {
		stop[0] = 1
	}
	if err := t.world().BroadcastF64(stop); err != nil {
		return false, err
	}
	if stop[0] == 0 {
		return false, nil
	}
	t.patience.stopped = t.earlyStop()
	return true, nil
}

// earlyStop says why the run stops early at its current step.
func (t *Trainer) earlyStop() string {
	measure := "validation loss"
	if b := t.data.BLEU; b != nil && b.KeepBest {
		measure = "validation BLEU"
	}
	return fmt.Sprintf("early stop at step %d: the %s has not improved in %d evaluations (Patience %d)",
		t.adam.Step, measure, t.patience.stale, t.patience.limit)
}

// Stopped says why Run stopped before Options.Steps, as early stopping
// (Options.Patience) made it; "" when it did not.
func (t *Trainer) Stopped() string { return t.patience.stopped }
