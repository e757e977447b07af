package trainer

import (
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/pkg/errors"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/trainer/internal/vadam"
)

// Adam is the optimizer of the paper (Kingma & Ba, 2015) with β1 = 0.9,
// β2 = 0.98, ε = 1e-9. For each parameter θ with gradient g at step t:
//
//	m = β1·m + (1-β1)·g,   v = β2·v + (1-β2)·g²
//	θ = θ - lr · m̂ / (sqrt(v̂) + ε),   m̂ = m / (1-β1^t),  v̂ = v / (1-β2^t)
//
// With WeightDecay λ > 0 it is AdamW (Loshchilov & Hutter, 2019): the
// decay is decoupled from the gradient's moments, applied before the step
// to every parameter of two or more dimensions (weight matrices and
// embeddings; biases and norm gains are not decayed):
//
//	θ = θ · (1 - lr·λ)
//
// The moments have the parameters' names and element type, so they are
// checkpointed like parameters.
type Adam struct {
	Beta1, Beta2, Eps float64
	// WeightDecay is AdamW's λ; 0 is Adam.
	WeightDecay float64
	// Step is the number of updates made.
	Step int
	m, v *graph.Params
}

// NewAdam returns the paper's Adam for params, with zero moments.
func NewAdam(params *graph.Params) (*Adam, error) {
	m, err := zerosLike(params)
	if err != nil {
		return nil, err
	}
	v, err := zerosLike(params)
	if err != nil {
		return nil, err
	}
	return &Adam{Beta1: 0.9, Beta2: 0.98, Eps: 1e-9, m: m, v: v}, nil
}

// NewAdamW returns AdamW for params: the paper's Adam with decoupled
// weight decay λ.
func NewAdamW(params *graph.Params, weightDecay float64) (*Adam, error) {
	if !(weightDecay >= 0) || math.IsInf(weightDecay, 0) {
		return nil, errors.Errorf("adamw: weight decay must be finite and not negative, have %g", weightDecay)
	}
	a, err := NewAdam(params)
	if a != nil {
		a.WeightDecay = weightDecay
	}
	return a, err
}

// zerosLike is a store with a zero tensor for each parameter of params.
func zerosLike(params *graph.Params) (*graph.Params, error) {
	z, err := graph.NewParams(params.Dtype(), rand.New(rand.NewPCG(0, 0)))
	if err != nil {
		return nil, err
	}
	for _, name := range params.Names() {
		if _, err := z.Get(name, params.Shape(name), graph.Zeros); err != nil {
			return nil, err
		}
	}
	return z, nil
}

// Update applies one step with learning rate lr to every parameter that has a
// gradient in grads.
func (a *Adam) Update(params *graph.Params, grads map[string]*tensor.Dense, lr float64) error {
	return a.UpdateScaled(params, grads, lr, 1)
}

// UpdateScaled is Update with every gradient multiplied by scale (say, to
// average and clip it), in the same pass over memory. The parameters are
// split into chunks that GOMAXPROCS workers update in parallel.
func (a *Adam) UpdateScaled(params *graph.Params, grads map[string]*tensor.Dense, lr, scale float64) error {
	a.Step++
	c1 := 1 - math.Pow(a.Beta1, float64(a.Step))
	c2 := 1 - math.Pow(a.Beta2, float64(a.Step))
	var jobs []func()
	names := params.Names()
	updated := make([]string, 0, len(names))
	for _, name := range names {
		g, ok := grads[name]
		if !ok {
			continue
		}
		updated = append(updated, name)
		theta, m, v := params.Value(name), a.m.Value(name), a.v.Value(name)
		if !g.Shape().Eq(theta.Shape()) {
			return errors.Errorf("adam: gradient of %s has shape %v, parameter %v", name, g.Shape(), theta.Shape())
		}
		k := vadam.Step{Beta1: a.Beta1, Beta2: a.Beta2, Scale: scale, Keep: 1, Step: lr / c1, RC2: 1 / math.Sqrt(c2), Eps: a.Eps}
		if len(theta.Shape()) >= 2 {
			k.Keep = 1 - lr*a.WeightDecay
		}
		jobs = elemsOf(theta.Dtype()).adam(jobs, theta, g, m, v, k)
	}
	parallel(jobs)
	params.Updated(updated...) // their packed copies are stale
	return nil
}

// UpdateOn is UpdateScaled on the device of the runtime of p, a program
// with a loss that has just run, from its gradients (graph.Program.Adam):
// the parameters and the moments stay on the device, and
// graph.Runtime.Download brings them to the host.
func (a *Adam) UpdateOn(p *graph.Program, params *graph.Params, lr, scale float64) error {
	return a.updateOn(p, params, p.ParamNames(), lr, scale)
}

// deviceAdam runs Adam's step on a device from the gradients it holds: a
// program's own (graph.Program) or sums of them (graph.GradSums).
type deviceAdam interface {
	Adam(params, m, v *graph.Params, names []string, s graph.AdamStep) error
}

// updateOn is UpdateOn from g's gradients of names.
func (a *Adam) updateOn(g deviceAdam, params *graph.Params, names []string, lr, scale float64) error {
	a.Step++
	return g.Adam(params, a.m, a.v, names, graph.AdamStep{
		Beta1: a.Beta1, Beta2: a.Beta2, Eps: a.Eps, LR: lr, Scale: scale, Decay: a.WeightDecay, Step: a.Step,
	})
}

// adamChunk is the number of elements a worker updates at a time.
const adamChunk = 1 << 15

// appendChunks appends to jobs one call of f per chunk of [0, n).
func appendChunks(jobs []func(), n int, f func(lo, hi int)) []func() {
	for lo := 0; lo < n; lo += adamChunk {
		hi := min(lo+adamChunk, n)
		jobs = append(jobs, func() { f(lo, hi) })
	}
	return jobs
}

// parallel runs the jobs on GOMAXPROCS goroutines.
func parallel(jobs []func()) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < int64(len(jobs)); i = next.Add(1) - 1 {
				jobs[i]()
			}
		}()
	}
	wg.Wait()
}

// Moments are the first and second moment estimates, for checkpoints.
func (a *Adam) Moments() (m, v *graph.Params) { return a.m, a.v }
