package trainer

import "github.com/transformer-go/transformer/model"

// CheckMemory refuses, before anything is allocated, a model of cfg whose
// training in float32 on batches of batchTokens target tokens (its
// weights, their gradients, Adam's two moments and one batch's
// activations; model.Config.Footprint) needs more memory than a CPU
// runtime may allocate, what the operating system gives this process. The
// error names the config field behind most of the parameters.
func CheckMemory(cfg model.Config, batchTokens int) error {
	return cfg.CheckMemory(nil, cfg.Footprint(4, batchTokens), true)
}
