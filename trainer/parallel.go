package trainer

import (
	"encoding/json"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/trainer/dist"
)

// Data parallelism (synchronous, as fairseq and PyTorch DDP do it): every
// rank reads the same data with the same seed, so all see the same global
// batches, and trains on its share of each (data.Batch.Shard). An update
// sums over ranks and accumulated batches b the token-weighted gradients,
//
//	g = Σ_ranks Σ_b n_b·∇L_b / Σ_ranks Σ_b n_b,   n_b target tokens, L_b the mean loss of b,
//
// by one all-reduce of a flat buffer that also carries the token count, the
// loss sum and a stop flag; every rank then clips and applies the same Adam
// step. One process is the case of one rank: the same run, up to the order
// of float summation.

// tail is what the flat buffer carries after the gradients.
const (
	tailTokens = iota
	tailLoss
	tailStop
	tailLen
)

// world is the run's world: Options.World, or this process alone.
func (t *Trainer) world() *dist.World {
	if t.opt.World == nil {
		return dist.Alone()
	}
	return t.opt.World
}

// sums is what a rank's batches of one update add up to.
type sums struct {
	tokens, loss float64 // target tokens; Σ n_b·L_b
	stop         bool
}

// reduce sums the accumulated gradients (in place), tokens, loss and stop
// flags over the ranks, and returns the totals. On a device the gradients
// are all-reduced on the host (Trainer.allReduce).
func (t *Trainer) reduce(s sums) (sums, error) {
	w := t.world()
	if w.Size() == 1 {
		return s, nil
	}
	tail := []float64{tailTokens: s.tokens, tailLoss: s.loss, tailStop: 0}
	if s.stop {
		tail[tailStop] = 1
	}
	if err := t.allReduce(w, tail); err != nil {
		return s, errors.Wrapf(err, "step %d", t.adam.Step+1)
	}
	return sums{tokens: tail[tailTokens], loss: tail[tailLoss], stop: tail[tailStop] > 0}, nil
}

// sumWithTail appends tail to buf, sums buf over the ranks with sum in
// place, and reads the tail's sums back into tail.
func sumWithTail[T float32 | float64](sum func([]T) error, buf []T, tail []float64) ([]T, error) {
	n := len(buf)
	for _, v := range tail {
		buf = append(buf, T(v))
	}
	if err := sum(buf); err != nil {
		return buf, err
	}
	for i := range tail {
		tail[i] = float64(buf[n+i])
	}
	return buf, nil
}

// syncFromRoot gives every rank rank 0's parameters, Adam's moments and the
// run's state: at the start of a run, fresh or resumed.
func (t *Trainer) syncFromRoot() error {
	w := t.world()
	if w.Size() == 1 {
		return nil
	}
	if err := t.toHost(); err != nil {
		return err
	}
	m, v := t.adam.Moments()
	for _, p := range []*graph.Params{t.params, m, v} {
		for _, name := range p.Names() {
			if err := elemsOf(p.Dtype()).broadcast(w, p.Value(name)); err != nil {
				return err
			}
		}
		p.Updated() // rank 0's values replaced this rank's
	}
	var js []byte
	if w.Root() {
		st, err := t.currentState()
		if err != nil {
			return err
		}
		if js, err = json.Marshal(st); err != nil {
			return errors.Wrap(err, "encoding the trainer state")
		}
	}
	js, err := w.BroadcastBytes(js)
	if err != nil || w.Root() {
		return err
	}
	var st state
	if err := json.Unmarshal(js, &st); err != nil {
		return errors.Wrap(err, "rank 0's trainer state")
	}
	return t.applyState(st)
}

// checkSame stops every rank if their parameters differ: a rank that
// diverged (a bug, or different data) would otherwise go on silently.
func (t *Trainer) checkSame() error {
	if t.world().Size() == 1 {
		return nil
	}
	if err := t.toHost(); err != nil {
		return err
	}
	return errors.Wrapf(t.world().Same(paramsHash(t.params)), "step %d: ranks diverged", t.adam.Step)
}

// paramsHash is an FNV-1a hash of the parameters' bits, a word at a time.
func paramsHash(p *graph.Params) uint64 {
	var h uint64 = 14695981039346656037
	for _, name := range p.Names() {
		h = elemsOf(p.Dtype()).hash(h, p.Value(name))
	}
	return h
}
