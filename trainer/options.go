package trainer

import (
	"fmt"
	"math"
	"slices"
	"strings"

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
	// given 0 is none); Adam has none, and refuses one given, 0 included.
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
	// early; a Patience the run's evaluations leave no room to stop early
	// (fewer than Patience+2 of them) is an error.
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
// (the one the schedule does not use) and, for Adam, WeightDecay.
func (o Options) WithDefaults() Options {
	if o.Optimizer == "" {
		o.Optimizer = OptimizerAdam
	}
	if o.WeightDecay == nil && o.Optimizer == OptimizerAdamW {
		o.WeightDecay = new(DefaultWeightDecay)
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
// defaults, and reports every bad one in one error, of type Problems.
func (o Options) Validate() error {
	var ps Problems
	add := func(format string, args ...any) { ps = append(ps, Problem{Format: format, Args: args}) }
	o.validateRates(add) // before the defaults: only what was given
	rates := len(ps)
	o = o.WithDefaults()
	for _, c := range []struct {
		field    Field
		v, least int
	}{
		{"Steps", o.Steps, 1}, {"Accumulate", o.Accumulate, 1}, {"EvalEvery", o.EvalEvery, 1}, {"SaveEvery", o.SaveEvery, 1},
		{"CheckEvery", o.CheckEvery, 0}, {"LogEvery", o.LogEvery, 0}, {"Patience", o.Patience, 0}, {"KeepLast", o.KeepLast, 1},
	} {
		if c.v < c.least {
			add("%v: want a number from %d", Given{c.field, c.v}, c.least)
		}
	}
	if !slices.Contains(Optimizers(), o.Optimizer) {
		add("%q: want one of %s", Given{"Optimizer", o.Optimizer}, strings.Join(Optimizers(), ", "))
	}
	if o.Patience > 0 && o.Steps > 0 && o.EvalEvery > 0 {
		o.validatePatience(add)
	}
	if o.Steps > 0 && rates == 0 { // a bad rate is reported once
		ps = append(ps, o.schedule(1).problems()...)
	}
	if !(o.ClipNorm >= 0) || math.IsInf(o.ClipNorm, 0) {
		add("%v: want a finite number from 0", Given{"ClipNorm", o.ClipNorm})
	}
	if o.OutDir == "" {
		add("%s is required", Field("OutDir"))
	}
	if len(ps) == 0 {
		return nil
	}
	return ps
}

// validatePatience refuses a Patience that cannot stop the run early: the
// run's evaluations (every EvalEvery steps, and at the last) must hold a
// first, which sets the best, Patience more without improvement, and one
// after those, at the last step, which the stop would skip.
func (o Options) validatePatience(add func(string, ...any)) {
	evals := (o.Steps + o.EvalEvery - 1) / o.EvalEvery
	if evals >= o.Patience+2 {
		return
	}
	times := fmt.Sprintf("%d times", evals)
	if evals == 1 {
		times = "once"
	}
	add("%v has no effect: with %v and %v the run evaluates %s, and stopping early needs %d evaluations (the first, %d without improvement, and one left to skip); lower it or %s, or leave it out",
		Given{"Patience", o.Patience}, Given{"Steps", o.Steps}, Given{"EvalEvery", o.EvalEvery}, times, o.Patience+2, o.Patience, Field("EvalEvery"))
}

// validateRates checks the given weight decay, schedule, rates and
// warm-up, as they were given (the defaults are checked by the schedule).
func (o Options) validateRates(add func(string, ...any)) {
	if d := o.WeightDecay; d != nil {
		switch {
		case !(*d >= 0) || math.IsInf(*d, 0):
			add("%v: want a finite number from 0", Given{"WeightDecay", *d})
		case o.Optimizer != OptimizerAdamW:
			add("%v needs %s %s (Adam has no decoupled weight decay)", Given{"WeightDecay", *d}, Field("Optimizer"), OptimizerAdamW)
		}
	}
	for _, r := range []struct {
		field Field
		v     *float64
	}{{"LR", o.LR}, {"LRFactor", o.LRFactor}} {
		if r.v != nil && !positive(*r.v) {
			add("%v: want a number in (0, +Inf)", Given{r.field, *r.v})
		}
	}
	switch {
	case o.LR != nil && o.LRFactor != nil:
		add("give %s (the peak rate) or %s (the paper's schedule's factor), not both: have %v and %v", Field("LR"), Field("LRFactor"), *o.LR, *o.LRFactor)
	case o.Schedule != "" && !slices.Contains(Schedules(), o.Schedule):
		add("%q: want one of %s", Given{"Schedule", o.Schedule}, strings.Join(Schedules(), ", "))
	case o.LRFactor != nil && o.Schedule != "" && o.Schedule != SchedulePaper:
		add("%s is the paper's schedule's; %v takes %s", Field("LRFactor"), Given{"Schedule", o.Schedule}, Field("LR"))
	}
	if o.Warmup != nil && *o.Warmup < 0 {
		add("%v: want a number from 0", Given{"Warmup", *o.Warmup})
	}
}

// Field names an option, a field of Options, in a Problem's message.
type Field string

// Given is an option and its value as given, in a Problem's message:
// "Field value" (with the verb %q, the value quoted).
type Given struct {
	Field Field
	Value any
}

// Format writes the field and the value, this with the verb.
func (g Given) Format(f fmt.State, verb rune) {
	fmt.Fprintf(f, "%s %"+string(verb), g.Field, g.Value)
}

// Problem is one bad option: a message whose Field and Given arguments
// a caller may name its own way, as a command names its flags.
type Problem struct {
	Format string
	Args   []any
}

// Say is the message, each Field and Given argument passed through name
// first (nil: as they are); a Field comes to name as a Given without a
// value.
func (p Problem) Say(name func(Given) Given) string {
	args := slices.Clone(p.Args)
	for i, a := range args {
		switch a := a.(type) {
		case Field:
			if name != nil {
				args[i] = name(Given{Field: a}).Field
			}
		case Given:
			if name != nil {
				args[i] = name(a)
			}
		}
	}
	return fmt.Sprintf(p.Format, args...)
}

// Problems are the bad options Options.Validate found, as its error.
type Problems []Problem

// Error is every problem's message, the options named as Options names
// them.
func (ps Problems) Error() string { return "bad training options: " + ps.Say(nil) }

// Say is every problem's message (see Problem.Say), joined by "; ".
func (ps Problems) Say(name func(Given) Given) string {
	msgs := make([]string, len(ps))
	for i, p := range ps {
		msgs[i] = p.Say(name)
	}
	return strings.Join(msgs, "; ")
}
