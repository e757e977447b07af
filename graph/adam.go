package graph

import (
	"math"

	"github.com/pkg/errors"
)

// AdamStep is one step of Adam, or AdamW with Decay λ > 0, with the
// constants of step Step ≥ 1 (Kingma & Ba, 2015; see trainer.Adam): for each
// parameter θ with gradient g and moments m, v,
//
//	θ ·= 1 - LR·λ (θ of two or more dimensions only),   g' = Scale·g
//	m = β1·m + (1-β1)·g',   v = β2·v + (1-β2)·g'²
//	θ -= LR/(1-β1^Step) · m / (sqrt(v)/sqrt(1-β2^Step) + ε)
type AdamStep struct {
	Beta1, Beta2, Eps, LR, Scale, Decay float64
	Step                                int
}

// adamConsts are a step's constants with the bias corrections folded in:
// step = LR/(1-β1^t), rc2 = 1/sqrt(1-β2^t), and keep = 1 - LR·λ for the
// parameters that decay.
type adamConsts struct{ step, rc2, keep float64 }

// consts are s's folded constants.
func (s AdamStep) consts() adamConsts {
	return adamConsts{
		step: s.LR / (1 - math.Pow(s.Beta1, float64(s.Step))),
		rc2:  1 / math.Sqrt(1-math.Pow(s.Beta2, float64(s.Step))),
		keep: 1 - s.LR*s.Decay,
	}
}

// decays reports whether AdamW decays a parameter of shape dims: weight
// matrices and embeddings, not biases and gains.
func decays(dims int) bool { return dims >= 2 }

// Adam updates the parameters of params that g has gradients of
// (g.ParamNames), and their moments m and v (stores of the same names and
// shapes), with step s, where the runtime keeps the gradients: on the host,
// parameter by parameter on every core; on a device, all of them in one
// launch (adam_multi_f32), whose device copies are then newer than the
// host's (Download brings them home). The stores count a new version of
// each (Params.Updated).
func (rt *Runtime) Adam(params, m, v *Params, g Gradients, s AdamStep) error {
	if s.Step < 1 {
		return errors.Errorf("adam: step %d, want 1 or more", s.Step)
	}
	grads, err := g.gradSet()
	if err != nil {
		return errors.Wrap(err, "adam")
	}
	return errors.Wrap(rt.at.adam(params, m, v, grads, s), "adam")
}

// checkAdam checks that params, m and v have every parameter of g.names of
// one shape, and that gradient i of g has as many elements as parameter i.
func checkAdam(params, m, v *Params, g gradSet) error {
	for i, name := range g.names {
		for _, store := range []*Params{params, m, v} {
			if sh := store.Shape(name); sh == nil || !sh.Eq(params.Shape(name)) {
				return errors.Errorf("%s: no parameter of shape %v in every store", name, params.Shape(name))
			}
		}
		if n := g.size(i); n != params.Shape(name).TotalSize() {
			return errors.Errorf("gradient of %s has %d elements, parameter %v", name, n, params.Shape(name))
		}
	}
	return nil
}
