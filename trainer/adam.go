package trainer

import (
	"math"
	"math/rand/v2"

	"github.com/pkg/errors"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
)

// Adam is the optimizer of the paper (Kingma & Ba, 2015) with β1 = 0.9,
// β2 = 0.98, ε = 1e-9. For each parameter θ with gradient g at step t:
//
//	m = β1·m + (1-β1)·g,   v = β2·v + (1-β2)·g²
//	θ = θ - lr · m̂ / (sqrt(v̂) + ε),   m̂ = m / (1-β1^t),  v̂ = v / (1-β2^t)
//
// The moments have the parameters' names and element type, so they are
// checkpointed like parameters.
type Adam struct {
	Beta1, Beta2, Eps float64
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
	a.Step++
	c1 := 1 - math.Pow(a.Beta1, float64(a.Step))
	c2 := 1 - math.Pow(a.Beta2, float64(a.Step))
	for _, name := range params.Names() {
		g, ok := grads[name]
		if !ok {
			continue
		}
		theta, m, v := params.Value(name), a.m.Value(name), a.v.Value(name)
		if !g.Shape().Eq(theta.Shape()) {
			return errors.Errorf("adam: gradient of %s has shape %v, parameter %v", name, g.Shape(), theta.Shape())
		}
		switch th := theta.Data().(type) {
		case []float32:
			adamStep(th, g.Data().([]float32), m.Data().([]float32), v.Data().([]float32), a, lr, c1, c2)
		case []float64:
			adamStep(th, g.Data().([]float64), m.Data().([]float64), v.Data().([]float64), a, lr, c1, c2)
		}
	}
	return nil
}

func adamStep[T float32 | float64](theta, g, m, v []T, a *Adam, lr, c1, c2 float64) {
	b1, b2 := T(a.Beta1), T(a.Beta2)
	for i, gi := range g {
		m[i] = b1*m[i] + (1-b1)*gi
		v[i] = b2*v[i] + (1-b2)*gi*gi
		mh, vh := float64(m[i])/c1, float64(v[i])/c2
		theta[i] -= T(lr * mh / (math.Sqrt(vh) + a.Eps))
	}
}

// Moments are the first and second moment estimates, for checkpoints.
func (a *Adam) Moments() (m, v *graph.Params) { return a.m, a.v }
