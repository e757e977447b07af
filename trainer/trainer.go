package trainer

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/pkg/errors"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/data"
	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/model"
	"github.com/transformer-go/transformer/trainer/dist"
)

// Options configures a training run. Steps and OutDir are required. Every
// other field left out (a nil pointer, or the zero value of a field whose
// zero is no setting) means the default its field documents, which
// WithDefaults fills in; a pointer field given a value, zero included, is
// that value, or an error. Go 1.26 writes one as new(0.5).
type Options struct {
	// Steps is the number of optimizer updates of the whole run.
	Steps int
	// Optimizer is OptimizerAdam (the default) or OptimizerAdamW.
	Optimizer string
	// WeightDecay is AdamW's decoupled weight decay λ (default 0.01; a
	// given 0 is none); Adam has none, and refuses one above 0.
	WeightDecay *float64
	// Schedule names the learning-rate schedule (see Schedule): "paper"
	// (the default), "constant", "linear" or "cosine".
	Schedule string
	// LR is the peak learning rate, reached at the end of warm-up. For the
	// paper's schedule it may be left out and LRFactor given instead; for
	// the others it defaults to 1e-3. A given rate must be positive.
	LR *float64
	// LRFactor is the paper's schedule's factor (default 1, when LR is
	// not given either); the other schedules refuse one. A given factor
	// must be positive.
	LRFactor *float64
	// Warmup is the number of warm-up updates. Default: 4,000 (the
	// paper's) or a tenth of Steps (at least 1), whichever is fewer; none
	// for the constant schedule. A given 0 is no warm-up, which the
	// paper's schedule refuses.
	Warmup *int
	// Cooldown, for the paper's and the constant schedule, is the number
	// of updates at the end of the run over which the rate decays
	// linearly (default 0: none).
	Cooldown int
	// ClipNorm, if positive, rescales the gradient to at most this global
	// norm (default 0: no clipping).
	ClipNorm float64
	// Accumulate is the number of batches whose gradients make one update
	// (default 1).
	Accumulate int
	// EvalEvery (default: a tenth of Steps, at least 1) and SaveEvery
	// (default: EvalEvery) are in updates; the last step always does both.
	EvalEvery, SaveEvery int
	// LogEvery, if positive, logs the loss of every LogEvery-th update
	// (with the reporter's step line) and appends it to metrics.jsonl as
	// a line of its own (Metrics.StepLoss); 0 logs none.
	LogEvery int
	// Patience, if positive, stops the run early, after Patience
	// evaluations in a row that did not improve the measure best.safetensors
	// is kept by (the validation loss, or BLEU with BLEUSample.KeepBest;
	// evaluations without BLEU do not count then). The final checkpoint is
	// written as at the last step, and Stopped says why. 0 never stops
	// early.
	Patience int
	// CheckEvery is how often, in updates, the ranks of a data-parallel run
	// compare a checksum of their parameters, beside every evaluation; 0
	// means at evaluations only. A difference stops every rank with an error.
	CheckEvery int
	// KeepLast is how many step checkpoints to keep (default 5; the best
	// one is kept apart).
	KeepLast int
	// Seed seeds dropout.
	Seed uint64
	// OutDir receives metrics.jsonl, checkpoints/, best.safetensors,
	// final.safetensors and loss.png. New creates it (with its parents)
	// if it does not exist, and refuses one it cannot write to. The run
	// writes only into the directory New found there: one renamed or
	// replaced meanwhile stops the run with an error.
	OutDir string
	// Meta is recorded in the metadata of every checkpoint, beside the
	// step: say, the fingerprints of the tokenizer's files.
	Meta map[string]string
	// World, if not nil, makes the run data-parallel over its ranks (see
	// trainer/dist): each trains on its share of every batch, and only rank 0
	// evaluates, reports and writes files.
	World *dist.World
	// Runtime is where and how the run's programs run: the device, the
	// precision of the products and their memory (nil: graph.CPU(), the
	// CPU in float32). The run's checkpoints are the same on every runtime.
	Runtime *graph.Runtime
}

// The optimizers (Options.Optimizer).
const (
	OptimizerAdam  = "adam"  // the paper's Adam
	OptimizerAdamW = "adamw" // Adam with decoupled weight decay
)

// Optimizers lists the optimizers' names.
func Optimizers() []string { return []string{OptimizerAdam, OptimizerAdamW} }

// The defaults of Options that are not the zero value.
const (
	DefaultWarmup      = 4000 // or a tenth of Steps, whichever is fewer
	DefaultLR          = 1e-3 // the peak rate of the schedules other than the paper's
	DefaultWeightDecay = 0.01 // AdamW's
	DefaultKeepLast    = 5
)

// WithDefaults is o with every field left out that has a default set to
// it; the pointer fields of the result are all set but LR or LRFactor
// (the one the schedule does not use).
func (o Options) WithDefaults() Options {
	if o.Optimizer == "" {
		o.Optimizer = OptimizerAdam
	}
	if o.WeightDecay == nil {
		decay := 0.0
		if o.Optimizer == OptimizerAdamW {
			decay = DefaultWeightDecay
		}
		o.WeightDecay = &decay
	}
	if o.Schedule == "" {
		o.Schedule = SchedulePaper
	}
	switch {
	case o.Schedule == SchedulePaper && o.LR == nil && o.LRFactor == nil:
		o.LRFactor = new(1.0)
	case o.Schedule != SchedulePaper && o.LR == nil:
		o.LR = new(DefaultLR)
	}
	if o.Warmup == nil {
		warmup := 0
		if o.Schedule != ScheduleConstant {
			warmup = max(1, min(DefaultWarmup, o.Steps/10))
		}
		o.Warmup = &warmup
	}
	if o.Accumulate == 0 {
		o.Accumulate = 1
	}
	if o.EvalEvery == 0 {
		o.EvalEvery = max(1, o.Steps/10)
	}
	if o.SaveEvery == 0 {
		o.SaveEvery = o.EvalEvery
	}
	if o.KeepLast == 0 {
		o.KeepLast = DefaultKeepLast
	}
	return o
}

// value is *p, or the zero value for nil.
func value[T any](p *T) T {
	var v T
	if p != nil {
		v = *p
	}
	return v
}

// schedule is the learning-rate schedule of options with defaults, for a
// model of width dModel.
func (o Options) schedule(dModel int) Schedule {
	return Schedule{Kind: o.Schedule, DModel: dModel, Warmup: value(o.Warmup), Factor: value(o.LRFactor), Peak: value(o.LR),
		Steps: o.Steps, Cooldown: o.Cooldown}
}

// Validate checks the options, fields left out standing for their
// defaults, and reports every bad one in one error.
func (o Options) Validate() error {
	var bad []string
	add := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }
	o.validateRates(add) // before the defaults: only what was given
	rates := len(bad)
	o = o.WithDefaults()
	if o.Steps <= 0 {
		add("Steps must be positive, have %d", o.Steps)
	}
	if !slices.Contains(Optimizers(), o.Optimizer) {
		add("Optimizer %q: want one of %v", o.Optimizer, Optimizers())
	}
	if o.Steps > 0 && rates == 0 { // a bad rate is reported once
		if err := o.schedule(1).Validate(); err != nil {
			add("%v", err)
		}
	}
	if !(o.ClipNorm >= 0) || math.IsInf(o.ClipNorm, 0) {
		add("ClipNorm must be finite and not negative, have %g", o.ClipNorm)
	}
	if o.Accumulate <= 0 {
		add("Accumulate must be at least 1 batch, have %d", o.Accumulate)
	}
	if o.EvalEvery <= 0 || o.SaveEvery <= 0 {
		add("EvalEvery and SaveEvery must be positive, have %d and %d", o.EvalEvery, o.SaveEvery)
	}
	if o.CheckEvery < 0 || o.LogEvery < 0 {
		add("CheckEvery and LogEvery must not be negative, have %d and %d", o.CheckEvery, o.LogEvery)
	}
	if o.Patience < 0 {
		add("Patience must not be negative (0: never stop early), have %d", o.Patience)
	}
	if o.KeepLast <= 0 {
		add("KeepLast must be at least 1, have %d", o.KeepLast)
	}
	if o.OutDir == "" {
		add("OutDir is required")
	}
	if len(bad) == 0 {
		return nil
	}
	return errors.Errorf("bad training options: %s", strings.Join(bad, "; "))
}

// validateRates checks the given weight decay, schedule, rates and
// warm-up, as they were given (the defaults are checked by the schedule).
func (o Options) validateRates(add func(string, ...any)) {
	if d := o.WeightDecay; d != nil {
		switch {
		case !(*d >= 0) || math.IsInf(*d, 0):
			add("WeightDecay must be finite and not negative, have %g", *d)
		case *d != 0 && o.Optimizer != OptimizerAdamW:
			add("WeightDecay %g needs Optimizer %q (Adam has no decoupled weight decay)", *d, OptimizerAdamW)
		}
	}
	for _, r := range []struct {
		name string
		v    *float64
	}{{"LR", o.LR}, {"LRFactor", o.LRFactor}} {
		if r.v != nil && !positive(*r.v) {
			add("%s must be positive and finite when given, have %g", r.name, *r.v)
		}
	}
	switch {
	case o.LR != nil && o.LRFactor != nil:
		add("give LR (the peak rate) or LRFactor (the paper's factor), not both: have %g and %g", *o.LR, *o.LRFactor)
	case o.Schedule != "" && !slices.Contains(Schedules(), o.Schedule):
		add("schedule %q: want one of %v", o.Schedule, Schedules())
	case o.LRFactor != nil && o.Schedule != "" && o.Schedule != SchedulePaper:
		add("LRFactor %g is the paper's schedule's; the %s schedule takes LR", *o.LRFactor, o.Schedule)
	}
	if o.Warmup != nil && *o.Warmup < 0 {
		add("Warmup must not be negative, have %d", *o.Warmup)
	}
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
	// Tokenizer, for a run on text, is the tokenizer of its examples: New
	// writes it into OutDir (bpe.txt, vocab.txt) and records its
	// fingerprints in every checkpoint, so that LoadRun loads it.
	Tokenizer *data.Tokenizer
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
	// acc holds the gradients summed over accumulated batches, and flat32
	// or flat64 the buffer of their all-reduce, when there is more than one
	// batch or rank to sum.
	acc    map[string]*tensor.Dense
	flat32 []float32
	flat64 []float64
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
	adam, err := NewAdamW(params, *opt.WeightDecay)
	if err != nil {
		return nil, err
	}
	root := opt.World == nil || opt.World.Root()
	var dir os.FileInfo
	if root {
		if dir, err = prepareOutDir(opt.OutDir); err != nil {
			return nil, err
		}
		if err := saveTokenizer(d.Tokenizer, opt.OutDir); err != nil {
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
func (t *Trainer) Run(ctx context.Context) error {
	defer t.train.Close()
	defer t.eval.Close()
	if err := t.syncFromRoot(); err != nil {
		return err
	}
	t.rep.Start(t.adam.Step, t.opt.Steps)
	t.window.start = time.Now() // the sums are those Resume restored, or none
	if t.patience.spent() {     // resumed from where the run stopped early
		return t.finish()
	}
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
	grads, s, unit, err := t.gradients()
	if err != nil {
		return false, err
	}
	s.stop = stop
	if s, err = t.reduce(grads, s); err != nil {
		return false, err
	}
	if s.tokens == 0 {
		return false, errors.Errorf("step %d: the batches hold no target tokens", t.adam.Step+1)
	}
	if l := s.loss / s.tokens; math.IsNaN(l) || math.IsInf(l, 0) {
		return false, errors.Errorf("step %d: the loss is %v; stopping. %s", t.adam.Step+1, l, t.lastGood())
	}
	scale := gradScale(t.params.Names(), grads, unit/s.tokens, t.opt.ClipNorm)
	t.stepLoss = s.loss / s.tokens
	t.window.loss += t.stepLoss
	t.window.tokens += int(s.tokens)
	t.window.steps++
	return s.stop, t.adam.UpdateScaled(t.params, grads, t.sched.At(t.adam.Step+1), scale)
}

// gradients runs this rank's shares of Accumulate batches and returns the
// token-weighted sum of their gradients, Σ_b n_b·∇L_b, divided by unit,
// with Σ_b n_b and Σ_b n_b·L_b. unit is 1, or for a single batch on a
// single rank n_b: its program's own gradients, ∇L_b, will do.
func (t *Trainer) gradients() (map[string]*tensor.Dense, sums, float64, error) {
	w := t.world()
	direct := t.opt.Accumulate == 1 && w.Size() == 1 // the program's own gradients will do
	if !direct {
		t.clearAcc()
	}
	var s sums
	grads, unit := t.acc, 1.0
	for range t.opt.Accumulate {
		b := t.data.Train.Next().Shard(w.Rank(), w.Size())
		if b.TgtTokens == 0 {
			continue
		}
		p, err := t.trainProgram(b)
		if err != nil {
			return nil, s, 0, err
		}
		if err := t.m.Feed(p, t.params.Dtype(), ModelBatch(b)); err != nil {
			return nil, s, 0, err
		}
		if err := p.Run(); err != nil {
			return nil, s, 0, errors.Wrapf(err, "step %d", t.adam.Step+1)
		}
		n := float64(b.TgtTokens)
		s.tokens += n
		s.loss += n * p.Loss()
		if direct {
			grads, unit = programGrads(p), n
		} else {
			addScaled(t.acc, p, n)
		}
	}
	return grads, s, unit, nil
}

// clearAcc zeroes the accumulated gradients, making them on first use.
func (t *Trainer) clearAcc() {
	if t.acc == nil {
		t.acc = map[string]*tensor.Dense{}
		for _, name := range t.params.Names() {
			t.acc[name] = tensor.New(tensor.Of(t.params.Dtype()), tensor.WithShape(t.params.Shape(name).Clone()...))
		}
		return
	}
	for _, g := range t.acc {
		g.Zero()
	}
}

// programGrads are p's gradients, by parameter name.
func programGrads(p *graph.Program) map[string]*tensor.Dense {
	return setGrads(map[string]*tensor.Dense{}, p)
}

// setGrads sets grads to p's gradients, by parameter name, and returns it.
func setGrads(grads map[string]*tensor.Dense, p *graph.Program) map[string]*tensor.Dense {
	for _, name := range p.ParamNames() {
		grads[name] = p.Grad(name)
	}
	return grads
}

// addScaled adds n times p's gradients into acc.
func addScaled(acc map[string]*tensor.Dense, p *graph.Program, n float64) {
	for _, name := range p.ParamNames() {
		switch a := acc[name].Data().(type) {
		case []float32:
			for i, v := range p.Grad(name).Data().([]float32) {
				a[i] += float32(n) * v
			}
		case []float64:
			for i, v := range p.Grad(name).Data().([]float64) {
				a[i] += n * v
			}
		}
	}
}

// trainProgram is the compiled training program for b's shape.
func (t *Trainer) trainProgram(b data.Batch) (*graph.Program, error) {
	sh := ModelBatch(b).Shape
	return t.train.Get(sh.String(), func() (*graph.Program, error) {
		return model.CompileTrain(t.rt, t.m, t.params, sh, t.rng)
	})
}

// gradScale is the factor that multiplies every gradient: scale, reduced
// so that the scaled gradients' global norm is at most clip (if clip > 0).
// The norm is summed in the order of names, so that every run and every
// rank gets the same bits.
func gradScale(names []string, grads map[string]*tensor.Dense, scale, clip float64) float64 {
	if clip <= 0 {
		return scale
	}
	var sq float64
	for _, name := range names {
		if g, ok := grads[name]; ok {
			sq += sumSquares(g)
		}
	}
	if norm := scale * math.Sqrt(sq); norm > clip {
		scale *= clip / norm
	}
	return scale
}

// sumSquares is Σ g², summed in float64.
func sumSquares(g *tensor.Dense) float64 {
	var sq float64
	switch d := g.Data().(type) {
	case []float32:
		for _, v := range d {
			sq += float64(v) * float64(v)
		}
	case []float64:
		for _, v := range d {
			sq += v * v
		}
	}
	return sq
}
