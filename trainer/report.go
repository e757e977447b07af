package trainer

// StepInfo describes the update just made.
type StepInfo struct {
	Step, Total int
	// Loss is the mean training loss since the last evaluation.
	Loss, LR, TokensPerS float64
}

// Reporter shows a run's progress: a progress bar on a terminal, log lines
// elsewhere (cmd/train has both).
type Reporter interface {
	// Start is called once with the first step (non-zero when resuming) and
	// the last.
	Start(step, total int)
	Step(StepInfo)
	Eval(Metrics)
	// Saved is called with each checkpoint written.
	Saved(step int, path string)
}

// quiet reports nothing.
type quiet struct{}

func (quiet) Start(int, int)    {}
func (quiet) Step(StepInfo)     {}
func (quiet) Eval(Metrics)      {}
func (quiet) Saved(int, string) {}
