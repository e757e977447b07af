package trainer

import (
	"math"
	"math/rand/v2"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/graph"
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

// Update applies one step with learning rate lr to every parameter that g
// has a gradient of, each gradient multiplied by scale (say, to average and
// clip it), where the gradients lie: on the host, on every core, or on a
// device, all parameters in one launch (graph.Runtime.Adam), which leaves
// the device's copies newer than the host's (graph.Runtime.Download).
func (a *Adam) Update(params *graph.Params, g graph.Gradients, lr, scale float64) error {
	err := g.Runtime().Adam(params, a.m, a.v, g, graph.AdamStep{
		Beta1: a.Beta1, Beta2: a.Beta2, Eps: a.Eps, LR: lr, Scale: scale, Decay: a.WeightDecay, Step: a.Step + 1,
	})
	if err != nil {
		return err
	}
	a.Step++
	return nil
}

// Moments are the first and second moment estimates, for checkpoints.
func (a *Adam) Moments() (m, v *graph.Params) { return a.m, a.v }
