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
	grads map[string]*tensor.Dense
	// onDevice says the programs run on a device, where Adam updates the
	// parameters too (Adam.UpdateOn).
	onDevice bool
}

// NewRig builds the model of cfg with float32 parameters (model.Init, seed
// 1) and compiles its training and scoring programs (as Trainer.Evaluate
// runs) for batches of shape sh, to run on rt.
func NewRig(cfg model.Config, sh model.Shape, rt *graph.Runtime) (*Rig, error) {
	m, params, err := model.Init(cfg, tensor.Float32, 1)
	if err != nil {
		return nil, err
	}
	r := &Rig{Batch: randomBatch(sh, cfg.Vocab), m: m, p: params, grads: map[string]*tensor.Dense{}, onDevice: rt != nil && rt.Device() == graph.DeviceCUDA}
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
	if err := r.m.Feed(r.train, r.p.Dtype(), r.Batch); err != nil {
		return err
	}
	if err := r.train.Run(); err != nil {
		return err
	}
	if r.onDevice {
		return r.adam.UpdateOn(r.train, r.p, 1e-4, 1)
	}
	return r.adam.Update(r.p, setGrads(r.grads, r.train), 1e-4)
}

// Forward runs one forward pass of the scoring graph as Trainer.Evaluate
// runs its batches: the second pass after a training step packs the
// weights for the GEMM, and the passes after it reuse them until the next
// TrainStep changes them (see graph.Runtime).
func (r *Rig) Forward() error {
	if err := r.m.Feed(r.fwd, r.p.Dtype(), r.Batch); err != nil {
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

// Scaling is what MeasureScaling measured: training steps on one core and
// on Procs.
type Scaling struct {
	Procs int
	// OneTokensPerS and ProcsTokensPerS are the median speeds of the steps at
	// GOMAXPROCS 1 and Procs, in target tokens per second.
	OneTokensPerS, ProcsTokensPerS float64
	// Ratio is the median over the pairs of steps of how many times faster
	// the step at Procs ran; Low and High are the least and the most.
	Ratio, Low, High float64
}

// MeasureScaling times training steps at GOMAXPROCS 1 and procs in pairs,
// one step at each, the order alternating from pair to pair, so that both
// steps of a pair meet the machine in the same state: warmup untimed
// pairs, then pairs timed ones. It sets GOMAXPROCS, for the whole process,
// while it runs, and puts it back.
func (r *Rig) MeasureScaling(warmup, pairs, procs int) (Scaling, error) {
	if pairs < 1 || warmup < 0 || procs < 2 {
		return Scaling{}, errors.Errorf("measuring scaling needs a warm-up ≥ 0, at least one pair and at least 2 cores, have %d, %d and %d", warmup, pairs, procs)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var one, many []time.Duration
	for i := range warmup + pairs {
		order := []int{1, procs}
		if i%2 == 1 {
			order = []int{procs, 1}
		}
		for _, p := range order {
			runtime.GOMAXPROCS(p)
			d, err := MedianDuration(1, r.TrainStep)
			if err != nil {
				return Scaling{}, err
			}
			if i < warmup {
				continue
			}
			if p == 1 {
				one = append(one, d)
			} else {
				many = append(many, d)
			}
		}
	}
	return scaling(one, many, procs, float64(len(r.Batch.TgtOut))), nil
}

// scaling sums up pairs of step durations, one[i] on one core and many[i]
// on procs, of steps of tokens target tokens.
func scaling(one, many []time.Duration, procs int, tokens float64) Scaling {
	ratios := make([]float64, len(one))
	for i := range one {
		ratios[i] = one[i].Seconds() / many[i].Seconds()
	}
	slices.Sort(ratios)
	slices.Sort(one)
	slices.Sort(many)
	mid := len(one) / 2
	return Scaling{
		Procs: procs, OneTokensPerS: tokens / one[mid].Seconds(), ProcsTokensPerS: tokens / many[mid].Seconds(),
		Ratio: ratios[mid], Low: ratios[0], High: ratios[len(ratios)-1],
	}
}
