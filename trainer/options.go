package trainer

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/graph"
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

