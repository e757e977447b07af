package trainer

import (
	"context"
	"math"
	"math/rand/v2"
	"path/filepath"
	"time"

	"github.com/pkg/errors"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/data"
	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/model"
)

// Options configures a training run.
type Options struct {
	// Steps is the number of optimizer updates of the whole run.
	Steps int
	// Warmup and LRFactor set the Schedule.
	Warmup   int
	LRFactor float64
	// ClipNorm, if positive, rescales the gradient to at most this global norm.
	ClipNorm float64
	// Accumulate is the number of batches whose gradients make one update.
	Accumulate int
	// EvalEvery and SaveEvery are in updates; the last step always does both.
	EvalEvery, SaveEvery int
	// KeepLast is how many step checkpoints to keep (the best one is kept apart).
	KeepLast int
	// Seed seeds dropout.
	Seed uint64
	// OutDir receives metrics.jsonl, checkpoints/, best.safetensors,
	// final.safetensors and loss.png.
	OutDir string
	// Meta is recorded in the metadata of every checkpoint, beside the
	// step: say, the fingerprints of the tokenizer's files.
	Meta map[string]string
}

// Validate reports the first bad option.
func (o Options) Validate() error {
	switch {
	case o.Steps <= 0:
		return errors.Errorf("steps must be positive, have %d", o.Steps)
	case o.Warmup <= 0:
		return errors.Errorf("warmup must be positive, have %d", o.Warmup)
	case !(o.LRFactor > 0) || math.IsInf(o.LRFactor, 0):
		return errors.Errorf("learning-rate factor must be positive and finite, have %g", o.LRFactor)
	case !(o.ClipNorm >= 0) || math.IsInf(o.ClipNorm, 0):
		return errors.Errorf("clip norm must be finite and not negative, have %g", o.ClipNorm)
	case o.Accumulate <= 0:
		return errors.Errorf("accumulation must be at least 1 batch, have %d", o.Accumulate)
	case o.EvalEvery <= 0 || o.SaveEvery <= 0:
		return errors.Errorf("evaluation and checkpoint intervals must be positive, have %d and %d", o.EvalEvery, o.SaveEvery)
	case o.KeepLast <= 0:
		return errors.Errorf("keep-last must be at least 1, have %d", o.KeepLast)
	case o.OutDir == "":
		return errors.New("no output directory")
	}
	return nil
}

// Data is what a run trains and evaluates on.
type Data struct {
	Train *data.Batcher
	Valid []data.Batch
	// HeldOut, for synthetic tasks, are examples whose greedy decodes are
	// checked for exact match at each evaluation.
	HeldOut []data.Example
	// BLEU, if not nil, is translated and scored with BLEU at evaluations.
	BLEU *BLEUSample
}

// Trainer runs training. Make one with New, optionally Resume it, then Run.
type Trainer struct {
	m       model.Model
	params  *graph.Params
	adam    *Adam
	sched   Schedule
	pcg     *rand.PCG
	rng     *rand.Rand
	train   *graph.Programs
	eval    *graph.Programs
	data    Data
	opt     Options
	rep     Reporter
	best    float64
	elapsed time.Duration
	window  window
}

// window sums up the steps since the last evaluation.
type window struct {
	loss   float64
	steps  int
	tokens int
	start  time.Time
}

// New returns a trainer of m's parameters params on d. rep may be nil.
func New(m model.Model, params *graph.Params, d Data, opt Options, rep Reporter) (*Trainer, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	if d.Train == nil || len(d.Valid) == 0 {
		return nil, errors.New("training needs training batches and validation batches")
	}
	if err := checkKind(m, d); err != nil {
		return nil, err
	}
	adam, err := NewAdam(params)
	if err != nil {
		return nil, err
	}
	if rep == nil {
		rep = quiet{}
	}
	pcg := rand.NewPCG(opt.Seed, 0x7472616e73666f72)
	return &Trainer{
		m: m, params: params, adam: adam, pcg: pcg, rng: rand.New(pcg),
		sched: Schedule{DModel: m.Config().DModel, Warmup: opt.Warmup, Factor: opt.LRFactor},
		train: graph.NewPrograms(), eval: graph.NewPrograms(),
		data: d, opt: opt, rep: rep, best: math.Inf(1),
	}, nil
}

// Step is the number of updates made so far.
func (t *Trainer) Step() int { return t.adam.Step }

// ErrInterrupted is returned by Run when its context is cancelled; the run was
// checkpointed first.
var ErrInterrupted = errors.New("training interrupted")

// Run trains until Options.Steps updates are made or ctx is cancelled. It
// evaluates and checkpoints on schedule, stops with an error (leaving the
// last good checkpoint) if the loss is not finite, and on cancellation saves
// a checkpoint and returns ErrInterrupted.
func (t *Trainer) Run(ctx context.Context) error {
	defer t.train.Close()
	defer t.eval.Close()
	t.rep.Start(t.adam.Step, t.opt.Steps)
	t.window = window{start: time.Now()}
	for t.adam.Step < t.opt.Steps {
		if ctx.Err() != nil {
			if _, err := t.save(); err != nil {
				return err
			}
			return ErrInterrupted
		}
		if err := t.update(); err != nil {
			return err
		}
		if err := t.afterStep(); err != nil {
			return err
		}
	}
	return t.finish()
}

// afterStep reports, evaluates and saves as scheduled.
func (t *Trainer) afterStep() error {
	step := t.adam.Step
	last := step == t.opt.Steps
	t.rep.Step(StepInfo{Step: step, Total: t.opt.Steps, Loss: t.window.loss / float64(max(t.window.steps, 1)),
		LR: t.sched.At(step), TokensPerS: t.window.rate()})
	if step%t.opt.EvalEvery == 0 || last {
		if err := t.evaluateAndLog(); err != nil {
			return err
		}
	}
	if step%t.opt.SaveEvery == 0 || last {
		if _, err := t.save(); err != nil {
			return err
		}
	}
	return nil
}

// rate is target tokens per second in the window.
func (w window) rate() float64 {
	return float64(w.tokens) / max(time.Since(w.start).Seconds(), 1e-9)
}

// update makes one optimizer step from Accumulate batches.
func (t *Trainer) update() error {
	grads := map[string]*tensor.Dense{}
	var loss float64
	for k := range t.opt.Accumulate {
		b := t.data.Train.Next()
		p, err := t.trainProgram(b)
		if err != nil {
			return err
		}
		if err := t.m.Feed(p, t.params.Dtype(), ModelBatch(b)); err != nil {
			return err
		}
		if err := p.Run(); err != nil {
			return errors.Wrapf(err, "step %d", t.adam.Step+1)
		}
		l := p.Loss()
		if math.IsNaN(l) || math.IsInf(l, 0) {
			return errors.Errorf("step %d: the loss is %v; stopping. The last good checkpoint is in %s",
				t.adam.Step+1, l, filepath.Join(t.opt.OutDir, "checkpoints"))
		}
		loss += l
		t.window.tokens += b.TgtTokens
		accumulate(grads, p, k == 0, t.opt.Accumulate > 1)
	}
	scaleGrads(grads, 1/float64(t.opt.Accumulate), t.opt.ClipNorm)
	t.window.loss += loss / float64(t.opt.Accumulate)
	t.window.steps++
	return t.adam.Update(t.params, grads, t.sched.At(t.adam.Step+1))
}

// trainProgram is the compiled training program for b's shape.
func (t *Trainer) trainProgram(b data.Batch) (*graph.Program, error) {
	sh := ModelBatch(b).Shape
	return t.train.Get(sh.String(), func() (*graph.Program, error) {
		return model.CompileTrain(t.m, t.params, sh, t.rng)
	})
}

// accumulate adds the program's gradients into grads. The first batch's are
// taken as they are, or copied if more batches will run (a program's
// gradients are overwritten by its next run).
func accumulate(grads map[string]*tensor.Dense, p *graph.Program, first, copyFirst bool) {
	for _, name := range p.ParamNames() {
		g := p.Grad(name)
		acc, ok := grads[name]
		switch {
		case ok && !first:
			addInto(acc, g)
		case copyFirst:
			grads[name] = g.Clone().(*tensor.Dense)
		default:
			grads[name] = g
		}
	}
}

func addInto(acc, g *tensor.Dense) {
	switch a := acc.Data().(type) {
	case []float32:
		for i, v := range g.Data().([]float32) {
			a[i] += v
		}
	case []float64:
		for i, v := range g.Data().([]float64) {
			a[i] += v
		}
	}
}

// scaleGrads multiplies every gradient by scale, then rescales them to the
// global norm clip if they exceed it (clip 0: no clipping).
func scaleGrads(grads map[string]*tensor.Dense, scale, clip float64) {
	if clip > 0 {
		var sq float64
		for _, g := range grads {
			for _, v := range graph.Float64s(g) {
				sq += v * v
			}
		}
		if norm := scale * math.Sqrt(sq); norm > clip {
			scale *= clip / norm
		}
	}
	if scale == 1 {
		return
	}
	for _, g := range grads {
		switch d := g.Data().(type) {
		case []float32:
			for i := range d {
				d[i] *= float32(scale)
			}
		case []float64:
			for i := range d {
				d[i] *= scale
			}
		}
	}
}
