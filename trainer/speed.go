package trainer

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"time"

	"github.com/pkg/errors"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/model"
)

// Rig runs training steps (forward, backward, Adam) and forward passes of a
// model on one fixed batch of random ids, for benchmarks.
type Rig struct {
	Batch model.Batch
	m     model.Model
	p     *graph.Params
	train *graph.Program
	fwd   *graph.Program
	adam  *Adam
}

// NewRig builds the model of cfg with float32 parameters (model.Init, seed
// 1) and compiles its training and scoring programs (as Trainer.Evaluate
// runs) for batches of shape sh, to run on rt.
func NewRig(cfg model.Config, sh model.Shape, rt *graph.Runtime) (*Rig, error) {
	m, params, err := model.Init(cfg, tensor.Float32, 1)
	if err != nil {
		return nil, err
	}
	r := &Rig{Batch: randomBatch(sh, cfg.Vocab), m: m, p: params}
	if r.train, err = model.CompileTrain(rt, m, params, sh, rand.New(rand.NewPCG(3, 4))); err != nil {
		return nil, err
	}
	if r.fwd, err = model.CompileScore(rt, m, params, sh); err != nil {
		return nil, err
	}
	r.adam, err = NewAdam(params)
	return r, err
}

// randomBatch is a full batch of random non-reserved ids.
func randomBatch(sh model.Shape, vocab int) model.Batch {
	rng := rand.New(rand.NewPCG(1, 1))
	rows := func(n int) [][]int {
		r := make([][]int, sh.Batch)
		for i := range r {
			r[i] = make([]int, n)
			for j := range r[i] {
				r[i][j] = 4 + rng.IntN(vocab-4)
			}
		}
		return r
	}
	return model.NewBatch(rows(sh.SrcLen), rows(sh.TgtLen), rows(sh.TgtLen), false)
}

// TrainStep runs one training step.
func (r *Rig) TrainStep() error {
	if err := r.m.Feed(r.train, r.Batch); err != nil {
		return err
	}
	if err := r.train.Run(); err != nil {
		return err
	}
	return r.adam.Update(r.p, r.train, 1e-4, 1)
}

// Forward runs one forward pass of the scoring graph as Trainer.Evaluate
// runs its batches: the second pass after a training step packs the
// weights for the GEMM, and the passes after it reuse them until the next
// TrainStep changes them (see graph.Runtime).
func (r *Rig) Forward() error {
	if err := r.m.Feed(r.fwd, r.Batch); err != nil {
		return err
	}
	return r.fwd.Run()
}

// Speed is what MeasureSpeed measured.
type Speed struct {
	TrainTokensPerS, ForwardTokensPerS float64
	// TrainBytesPerStep is the memory allocated by one training step.
	TrainBytesPerStep float64
}

// MeasureSpeed times training steps and forward passes in target tokens per
// second: warmup untimed runs of each, then the median of runs timed ones.
func (r *Rig) MeasureSpeed(warmup, runs int) (Speed, error) {
	if runs < 1 || warmup < 0 {
		return Speed{}, errors.Errorf("measuring needs a warm-up ≥ 0 and at least one run, have %d and %d", warmup, runs)
	}
	tokens := float64(len(r.Batch.TgtOut))
	var s Speed
	var before, after runtime.MemStats
	for i, f := range []func() error{r.TrainStep, r.Forward} {
		for range warmup {
			if err := f(); err != nil {
				return s, err
			}
		}
		runtime.ReadMemStats(&before)
		d, err := MedianDuration(runs, f)
		if err != nil {
			return s, err
		}
		runtime.ReadMemStats(&after)
		if i == 0 {
			s.TrainTokensPerS = tokens / d.Seconds()
			s.TrainBytesPerStep = float64(after.TotalAlloc-before.TotalAlloc) / float64(runs)
		} else {
			s.ForwardTokensPerS = tokens / d.Seconds()
		}
	}
	return s, nil
}

// MedianDuration runs f runs times and returns the median of their
// durations.
func MedianDuration(runs int, f func() error) (time.Duration, error) {
	ds := make([]time.Duration, runs)
	for i := range ds {
		start := time.Now()
		if err := f(); err != nil {
			return 0, err
		}
		ds[i] = time.Since(start)
	}
	slices.Sort(ds)
	return ds[runs/2], nil
}

// Pairs is what MeasurePairs measured: steps of two kinds, a and b, timed
// in turn.
type Pairs struct {
	// ATokensPerS and BTokensPerS are the median speeds of the a and b
	// steps, in target tokens per second.
	ATokensPerS, BTokensPerS float64
	// Ratio is the median over the pairs of steps of how many times faster
	// the b step of a pair ran; Low and High are the least and the most.
	Ratio, Low, High float64
}

// MeasurePairs times the steps a and b of tokens target tokens each in
// pairs, one of each, the order alternating from pair to pair, so that both
// steps of a pair meet the machine in the same state: warmup untimed pairs,
// then pairs timed ones. On a machine whose speed drifts, the ratio of a
// pair holds where the speeds do not.
func MeasurePairs(a, b func() error, warmup, pairs int, tokens float64) (Pairs, error) {
	if pairs < 1 || warmup < 0 {
		return Pairs{}, errors.Errorf("measuring pairs of steps needs a warm-up ≥ 0 and at least one pair, have %d and %d", warmup, pairs)
	}
	var da, db []time.Duration
	for i := range warmup + pairs {
		steps, times := []func() error{a, b}, []*[]time.Duration{&da, &db}
		if i%2 == 1 {
			steps[0], steps[1], times[0], times[1] = b, a, &db, &da
		}
		for k, step := range steps {
			d, err := MedianDuration(1, step)
			if err != nil {
				return Pairs{}, err
			}
			if i >= warmup {
				*times[k] = append(*times[k], d)
			}
		}
	}
	return pairsOf(da, db, tokens), nil
}

// pairsOf sums up pairs of step durations a[i] and b[i] of steps of tokens
// target tokens.
func pairsOf(a, b []time.Duration, tokens float64) Pairs {
	ratios := make([]float64, len(a))
	for i := range a {
		ratios[i] = a[i].Seconds() / b[i].Seconds()
	}
	slices.Sort(ratios)
	a, b = slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b))
	mid := len(a) / 2
	return Pairs{ATokensPerS: tokens / a[mid].Seconds(), BTokensPerS: tokens / b[mid].Seconds(),
		Ratio: ratios[mid], Low: ratios[0], High: ratios[len(ratios)-1]}
}

// MeasureScaling times training steps at GOMAXPROCS 1 (a) and procs (b)
// with MeasurePairs. It sets GOMAXPROCS, for the whole process, while it
// runs, and puts it back.
func (r *Rig) MeasureScaling(warmup, pairs, procs int) (Pairs, error) {
	if procs < 2 {
		return Pairs{}, errors.Errorf("measuring scaling needs at least 2 cores, have %d", procs)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	at := func(p int) func() error {
		return func() error {
			runtime.GOMAXPROCS(p)
			return r.TrainStep()
		}
	}
	return MeasurePairs(at(1), at(procs), warmup, pairs, float64(len(r.Batch.TgtOut)))
}
