package trainer

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"time"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/data"
	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/model"
)

// Data is what a run trains and evaluates on.
type Data struct {
	Train *data.Batcher
	Valid []data.Batch
	// HeldOut, for synthetic tasks, are examples whose greedy decodes are
	// checked for exact match at each evaluation.
	HeldOut []data.Example
	// BLEU, if not nil, is translated and scored with BLEU at evaluations.
	BLEU *BLEUSample
	// Tokenizer, for a run on text, is the tokenizer of its examples, a
	// data.BPETokenizer or a *sentencepiece.Tokenizer: New writes it into
	// OutDir (bpe.txt and vocab.txt, or spm.model) and records its
	// fingerprints in every checkpoint, so that inference.Load loads it.
	Tokenizer data.Tokenizer
}

// Trainer runs training. Make one with New, optionally Resume it, then Run.
type Trainer struct {
	m       model.Model
	params  *graph.Params
	rt      *graph.Runtime
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
	// patience counts evaluations without improvement (Options.Patience).
	patience patience
	// dir is the output directory New found at OutDir (rank 0's): every
	// write checks that OutDir still names it.
	dir os.FileInfo
	// stepLoss is the loss of the last update.
	stepLoss float64
	// acc sums the gradients over accumulated batches, when there is more
	// than one batch or rank to sum: on the host, or on the runtime's
	// device (grads.go).
	acc *graph.GradSums
	// flat is the buffer of the gradients' all-reduce over the ranks.
	flat any
}

// window sums up the steps since the last evaluation.
type window struct {
	loss   float64
	steps  int
	tokens int
	start  time.Time
}

// windowState is the part of the window a checkpoint keeps, so that a
// resumed run reports the training loss a run never interrupted would.
type windowState struct {
	Loss   float64 `json:"loss"`
	Steps  int     `json:"steps"`
	Tokens int     `json:"tokens"`
}

// New returns a trainer of m's parameters params on d, with rep showing
// its progress (nil: NewReporter(os.Stderr, nil), a progress bar on a
// terminal and log lines elsewhere; Quiet shows nothing). It checks
// everything the run will need before any work, and reports all bad
// options in one error: the options (zero values meaning their
// defaults), the data against the model's kind, and the output
// directory, which it creates if it does not exist (rank 0 of a
// data-parallel run alone).
func New(m model.Model, params *graph.Params, d Data, opt Options, rep Reporter) (*Trainer, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	opt = opt.WithDefaults()
	if d.Train == nil || len(d.Valid) == 0 {
		return nil, errors.New("training needs training batches and validation batches")
	}
	if err := checkKind(m, d); err != nil {
		return nil, err
	}
	meta, err := tokenizerMeta(m, d.Tokenizer, opt.Meta, opt.OutDir)
	if err != nil {
		return nil, err
	}
	opt.Meta = meta
	sched := opt.schedule(m.Config().DModel)
	if err := sched.Validate(); err != nil {
		return nil, err
	}
	adam, err := NewAdamW(params, value(opt.WeightDecay))
	if err != nil {
		return nil, err
	}
	root := opt.World == nil || opt.World.Root()
	var dir os.FileInfo
	if root {
		if dir, err = prepareOutDir(opt.OutDir); err != nil {
			return nil, err
		}
		if err := SaveTokenizer(d.Tokenizer, opt.OutDir); err != nil {
			return nil, err
		}
	}
	switch {
	case !root:
		rep = Quiet
	case rep == nil:
		rep = NewReporter(os.Stderr, nil)
	}
	pcg := rand.NewPCG(opt.Seed, 0x7472616e73666f72)
	rt := opt.Runtime
	if rt == nil {
		rt = graph.CPU()
	}
	return &Trainer{
		m: m, params: params, rt: rt, adam: adam, pcg: pcg, rng: rand.New(pcg), sched: sched,
		train: graph.NewPrograms(), eval: graph.NewPrograms(),
		data: d, opt: opt, rep: rep, best: math.Inf(1), dir: dir, patience: patience{limit: opt.Patience},
	}, nil
}

// prepareOutDir creates dir (with its parents) if it does not exist,
// checks that files can be written in it, and returns its identity.
func prepareOutDir(dir string) (os.FileInfo, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, errors.Wrapf(err, "output directory %s", dir)
	}
	f, err := os.CreateTemp(dir, ".write-check-*")
	if err != nil {
		return nil, errors.Wrapf(err, "output directory %s is not writable", dir)
	}
	f.Close()
	if err := os.Remove(f.Name()); err != nil {
		return nil, errors.Wrapf(err, "output directory %s", dir)
	}
	st, err := os.Stat(dir)
	return st, errors.Wrapf(err, "output directory %s", dir)
}

// checkDir refuses to write once OutDir no longer names the directory New
// found there (renamed, moved or replaced while the run trained): the run
// would write into another run's directory, or make a new one.
func (t *Trainer) checkDir() error {
	st, err := os.Stat(t.opt.OutDir)
	if err == nil && os.SameFile(st, t.dir) {
		return nil
	}
	return errors.Errorf("step %d: the output directory %s is no longer the one this run started in (it was renamed, moved or removed); stopping without writing to it", t.adam.Step, t.opt.OutDir)
}

// moved is err, or checkDir's error if err is that of a write the output
// directory's move broke (whose own error says no more than "no such file").
func (t *Trainer) moved(err error) error {
	if err != nil {
		if derr := t.checkDir(); derr != nil {
			return derr
		}
	}
	return err
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
func (t *Trainer) Run(ctx context.Context) (err error) {
	defer t.train.Close()
	defer t.eval.Close()
	defer func() {
		if rerr := t.release(); err == nil {
			err = rerr
		}
	}()
	if err := t.syncFromRoot(); err != nil {
		return err
	}
	if t.patience.spent() { // resumed from where the run stopped early: nothing to train
		t.patience.stopped = t.earlyStop() + ", before this resume; the final weights are written again"
		return t.finish()
	}
	t.rep.Start(t.adam.Step, t.opt.Steps)
	t.window.start = time.Now() // the sums are those Resume restored, or none
	for t.adam.Step < t.opt.Steps {
		// Alone, a cancelled run stops at once; with other ranks, the stop is
		// carried by the next update's all-reduce, so that all stop together.
		stop := ctx.Err() != nil
		if stop && t.world().Size() == 1 {
			return t.interrupt()
		}
		stopAll, err := t.update(stop)
		if err != nil {
			return err
		}
		if err := t.afterStep(); err != nil {
			return err
		}
		if stopAll {
			return t.interrupt()
		}
		if t.patience.stopped != "" {
			break
		}
	}
	return t.finish()
}

// interrupt checkpoints the run and returns ErrInterrupted.
func (t *Trainer) interrupt() error {
	if _, err := t.save(); err != nil {
		return err
	}
	return ErrInterrupted
}

// afterStep reports, evaluates and saves as scheduled.
func (t *Trainer) afterStep() error {
	step := t.adam.Step
	last := step == t.opt.Steps
	logged := t.opt.LogEvery > 0 && step%t.opt.LogEvery == 0
	t.rep.Step(StepInfo{Step: step, Total: t.opt.Steps, Loss: t.window.loss / float64(max(t.window.steps, 1)),
		LR: t.sched.At(step), TokensPerS: t.window.rate(), StepLoss: t.stepLoss, Logged: logged})
	if logged {
		if err := t.logStep(); err != nil {
			return err
		}
	}
	evaluate := step%t.opt.EvalEvery == 0 || last
	if evaluate || t.opt.CheckEvery > 0 && step%t.opt.CheckEvery == 0 {
		if err := t.checkSame(); err != nil {
			return err
		}
	}
	early := false
	if evaluate {
		if err := t.evaluateAndLog(); err != nil {
			return err
		}
		var err error
		if early, err = t.stopEarly(); err != nil {
			return err
		}
	}
	if step%t.opt.SaveEvery == 0 || last || early {
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

// update makes one optimizer step from Accumulate batches (this rank's
// shares of them), with the gradient g of parallel.go, and reports whether
// any rank asked to stop.
func (t *Trainer) update(stop bool) (bool, error) {
	g, s, unit, err := t.gradients()
	if err != nil {
		return false, err
	}
	s.stop = stop
	if s, err = t.reduce(s); err != nil {
		return false, err
	}
	if s.tokens == 0 {
		return false, errors.Errorf("step %d: the batches hold no target tokens", t.adam.Step+1)
	}
	if l := s.loss / s.tokens; math.IsNaN(l) || math.IsInf(l, 0) {
		return false, errors.Errorf("step %d: the loss is %v; stopping. %s", t.adam.Step+1, l, t.lastGood())
	}
	scale, err := gradScale(g, unit/s.tokens, t.opt.ClipNorm)
	if err != nil {
		return false, errors.Wrapf(err, "step %d", t.adam.Step+1)
	}
	t.stepLoss = s.loss / s.tokens
	t.window.loss += t.stepLoss
	t.window.tokens += int(s.tokens)
	t.window.steps++
	step := t.adam.Step + 1
	return s.stop, errors.Wrapf(t.adam.Update(t.params, g, t.sched.At(step), scale), "step %d", step)
}

// gradients runs this rank's shares of Accumulate batches and returns the
// token-weighted sum of their gradients, Σ_b n_b·∇L_b, divided by unit,
// with Σ_b n_b and Σ_b n_b·L_b. unit is 1, or for a single batch on a
// single rank n_b: its program's own gradients, ∇L_b, will do.
func (t *Trainer) gradients() (graph.Gradients, sums, float64, error) {
	w := t.world()
	direct := t.opt.Accumulate == 1 && w.Size() == 1 // the program's own gradients will do
	var s sums
	var g graph.Gradients
	if !direct {
		acc, err := t.accumulator()
		if err != nil {
			return nil, s, 0, err
		}
		g = acc
	}
	unit := 1.0
	for range t.opt.Accumulate {
		b := t.data.Train.Next().Shard(w.Rank(), w.Size())
		if b.TgtTokens == 0 {
			continue
		}
		p, err := t.trainProgram(b)
		if err != nil {
			return nil, s, 0, err
		}
		if err := t.m.Feed(p, ModelBatch(b)); err != nil {
			return nil, s, 0, err
		}
		if err := p.Run(); err != nil {
			return nil, s, 0, errors.Wrapf(err, "step %d", t.adam.Step+1)
		}
		l, err := p.Loss()
		if err != nil {
			return nil, s, 0, errors.Wrapf(err, "step %d", t.adam.Step+1)
		}
		n := float64(b.TgtTokens)
		s.tokens += n
		s.loss += n * l
		if direct {
			g, unit = p, n
		} else if err := t.acc.Add(p, n); err != nil {
			return nil, s, 0, errors.Wrapf(err, "step %d", t.adam.Step+1)
		}
	}
	return g, s, unit, nil
}

// trainProgram is the compiled training program for b's shape.
func (t *Trainer) trainProgram(b data.Batch) (*graph.Program, error) {
	sh := ModelBatch(b).Shape
	return t.train.Get(sh.String(), func() (*graph.Program, error) {
		return model.CompileTrain(t.rt, t.m, t.params, sh, t.rng)
	})
}

// gradScale is the factor that multiplies every gradient of g: scale,
// reduced so that the scaled gradients' global norm is at most clip (if
// clip > 0). Every run and every rank gets the same bits of it (see
// graph.Gradients.SumSquares).
func gradScale(g graph.Gradients, scale, clip float64) (float64, error) {
	if clip <= 0 {
		return scale, nil
	}
	sq, err := g.SumSquares()
	if norm := scale * math.Sqrt(sq); norm > clip {
		scale *= clip / norm
	}
	return scale, err
}
