package trainer

import "math"

// Schedule is the paper's learning rate (section 5.3): linear warmup, then
// decay with the inverse square root of the step:
//
//	lr(step) = Factor · dModel^-0.5 · min(step^-0.5, step · warmup^-1.5)
//
// With Cooldown > 0 (not in the paper), the last Cooldown of Steps updates
// also fall linearly towards zero, so that a short run settles:
//
//	lr(step) · min(1, (Steps − step + 1) / Cooldown)
type Schedule struct {
	DModel, Warmup int
	Factor         float64
	// Steps is the length of the run and Cooldown the updates at its end
	// over which the rate decays; Cooldown 0 keeps the paper's schedule.
	Steps, Cooldown int
}

// At is the learning rate of step (counted from 1).
func (s Schedule) At(step int) float64 {
	st := float64(max(step, 1))
	lr := s.Factor / math.Sqrt(float64(s.DModel)) * math.Min(1/math.Sqrt(st), st*math.Pow(float64(s.Warmup), -1.5))
	if s.Cooldown > 0 {
		lr *= math.Min(1, float64(s.Steps-step+1)/float64(s.Cooldown))
	}
	return lr
}
