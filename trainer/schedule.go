package trainer

import "math"

// Schedule is the paper's learning rate (section 5.3): linear warmup, then
// decay with the inverse square root of the step:
//
//	lr(step) = Factor · dModel^-0.5 · min(step^-0.5, step · warmup^-1.5)
type Schedule struct {
	DModel, Warmup int
	Factor         float64
}

// At is the learning rate of step (counted from 1).
func (s Schedule) At(step int) float64 {
	st := float64(max(step, 1))
	return s.Factor / math.Sqrt(float64(s.DModel)) * math.Min(1/math.Sqrt(st), st*math.Pow(float64(s.Warmup), -1.5))
}
