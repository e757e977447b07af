package trainer

import (
	"math"
	"strings"
)

// The learning-rate schedules (Schedule.Kind, Options.Schedule).
const (
	// SchedulePaper is the paper's: linear warm-up, then decay with the
	// inverse square root of the step.
	SchedulePaper = "paper"
	// ScheduleConstant is the peak rate throughout, after an optional
	// linear warm-up.
	ScheduleConstant = "constant"
	// ScheduleLinear is linear warm-up, then linear decay towards zero at
	// the end of the run.
	ScheduleLinear = "linear"
	// ScheduleCosine is linear warm-up, then cosine decay towards zero at
	// the end of the run (Loshchilov & Hutter, 2017, without restarts).
	ScheduleCosine = "cosine"
)

// Schedules lists the schedules' names.
func Schedules() []string {
	return []string{SchedulePaper, ScheduleConstant, ScheduleLinear, ScheduleCosine}
}

// Schedule is the learning rate of each step (counted from 1) of a run of
// Steps updates. Each kind has a peak rate, reached at the end of warm-up.
//
// The paper's (section 5.3), Kind "" or SchedulePaper: linear warm-up, then
// decay with the inverse square root of the step,
//
//	lr(step) = Factor · dModel^-0.5 · min(step^-0.5, step · warmup^-1.5)
//
// whose peak, at step = warmup, is Factor · (dModel · warmup)^-0.5; a
// non-zero Peak sets Factor to give that peak.
//
// The others, with p = (step − warmup − 1) / (Steps − warmup) the progress
// of the decay (0 at its first step):
//
//	constant: Peak · min(1, step / warmup)          (no warm-up if Warmup is 0)
//	linear:   Peak · step / warmup, then Peak · (1 − p)
//	cosine:   Peak · step / warmup, then Peak · (1 + cos(π · p)) / 2
//
// Linear and cosine end at Peak / (Steps − warmup) and a little above zero
// on the last step, so that no update is wasted.
//
// With Cooldown > 0 (paper and constant only; not in the paper), the last
// Cooldown of Steps updates also fall linearly towards zero, so that a
// short run settles:
//
//	lr(step) · min(1, (Steps − step + 1) / Cooldown)
type Schedule struct {
	Kind           string
	DModel, Warmup int
	Factor         float64
	Peak           float64
	// Steps is the length of the run and Cooldown the updates at its end
	// over which the rate decays; Cooldown 0 keeps the schedule as it is.
	Steps, Cooldown int
}

// Validate reports the schedule's first bad field, as Problems naming
// the options of Options that set it: Schedule (Kind), LR (Peak), LRFactor
// (Factor), Warmup, Steps and Cooldown.
func (s Schedule) Validate() error {
	if ps := s.problems(); len(ps) > 0 {
		return ps
	}
	return nil
}

// problems is the schedule's first bad field, if any.
func (s Schedule) problems() Problems {
	kind := s.Kind
	if kind == "" {
		kind = SchedulePaper
	}
	var p Problem
	switch {
	case kind != SchedulePaper && kind != ScheduleConstant && kind != ScheduleLinear && kind != ScheduleCosine:
		p = Problem{"%q: want one of %s", []any{Given{"Schedule", s.Kind}, strings.Join(Schedules(), ", ")}}
	case s.Steps < 0:
		p = Problem{"%v: want a number from 0", []any{Given{"Steps", s.Steps}}}
	case kind == SchedulePaper && s.DModel <= 0:
		p = Problem{"schedule paper: d_model must be positive, have %d", []any{s.DModel}}
	case kind == SchedulePaper && s.Warmup <= 0:
		p = Problem{"%v: the paper's schedule needs a warm-up of at least 1 update (%s constant, linear and cosine take 0)",
			[]any{Given{"Warmup", s.Warmup}, Field("Schedule")}}
	case kind == SchedulePaper && s.Peak == 0 && !positive(s.Factor):
		p = Problem{"%v: want a number in (0, +Inf), or a peak rate %s", []any{Given{"LRFactor", s.Factor}, Field("LR")}}
	case (kind != SchedulePaper || s.Peak != 0) && !positive(s.Peak):
		p = Problem{"%v: want a number in (0, +Inf)", []any{Given{"LR", s.Peak}}}
	case s.Warmup < 0:
		p = Problem{"%v: want a number from 0", []any{Given{"Warmup", s.Warmup}}}
	case (kind == ScheduleLinear || kind == ScheduleCosine) && s.Warmup >= s.Steps:
		p = Problem{"%v: warm-up (%d) must be shorter than the run (%d steps), to leave updates to decay over",
			[]any{Given{"Schedule", kind}, s.Warmup, s.Steps}}
	case s.Cooldown < 0 || s.Cooldown > s.Steps:
		p = Problem{"%v: want a number from 0 to the %d steps", []any{Given{"Cooldown", s.Cooldown}, s.Steps}}
	case s.Cooldown > 0 && (kind == ScheduleLinear || kind == ScheduleCosine):
		p = Problem{"%v decays to the end of the run already: %v: want 0", []any{Given{"Schedule", kind}, Given{"Cooldown", s.Cooldown}}}
	default:
		return nil
	}
	return Problems{p}
}

// positive reports whether v is positive and finite.
func positive(v float64) bool { return v > 0 && !math.IsInf(v, 0) }

// At is the learning rate of step (counted from 1).
func (s Schedule) At(step int) float64 {
	st := float64(max(step, 1))
	w := float64(s.Warmup)
	var lr float64
	switch s.Kind {
	case ScheduleConstant:
		lr = s.Peak
		if s.Warmup > 0 {
			lr *= math.Min(1, st/w)
		}
	case ScheduleLinear, ScheduleCosine:
		if st <= w {
			return s.Peak * st / w
		}
		p := (st - w - 1) / float64(s.Steps-s.Warmup)
		if s.Kind == ScheduleLinear {
			return s.Peak * (1 - p)
		}
		return s.Peak * (1 + math.Cos(math.Pi*p)) / 2
	default:
		factor := s.Factor
		if s.Peak != 0 {
			factor = s.Peak * math.Sqrt(float64(s.DModel)*w)
		}
		lr = factor / math.Sqrt(float64(s.DModel)) * math.Min(1/math.Sqrt(st), st*math.Pow(w, -1.5))
	}
	if s.Cooldown > 0 {
		lr *= math.Min(1, float64(s.Steps-step+1)/float64(s.Cooldown))
	}
	return lr
}
