package graph

import (
	"math"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"

	"github.com/transformer-go/transformer/graph/internal/cuda"
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

// Adam updates the named parameters of params and their moments m and v
// (stores of the same names and shapes) on the device of the program's
// runtime, from the gradients of its last run, with the adam_f32 kernel:
// nothing crosses to the host. The device's copies of the three are then
// newer than the host's, and the stores count a new version of each
// (Params.Updated), so that no program copies the host's values over them;
// Runtime.Download brings them back to the host.
func (p *Program) Adam(params, m, v *Params, names []string, s AdamStep) error {
	grads, err := p.deviceGrads(names)
	if err != nil {
		return errors.Wrap(err, "adam")
	}
	return p.rt.adam(params, m, v, names, grads, s)
}

// deviceGrads are the device values of the gradients of names after the
// program's last run.
func (p *Program) deviceGrads(names []string) ([]cuda.Ptr, error) {
	if p.dev == nil {
		return nil, errors.New("the program does not run on a device")
	}
	if !p.ran {
		return nil, errors.New("the program has not run since it became active")
	}
	grads := make([]cuda.Ptr, len(names))
	for i, name := range names {
		g := p.gradNode(name)
		if g == nil {
			return nil, errors.Errorf("the program has no gradient of %s", name)
		}
		grads[i] = p.dev.loc[g]
	}
	return grads, nil
}

// adam is Program.Adam from grads, the device values of the gradients of names.
func (rt *Runtime) adam(params, m, v *Params, names []string, grads []cuda.Ptr, s AdamStep) error {
	step := s.LR / (1 - math.Pow(s.Beta1, float64(s.Step)))
	rc2 := 1 / math.Sqrt(1-math.Pow(s.Beta2, float64(s.Step)))
	for i, name := range names {
		keep := 1.0
		if len(params.Shape(name)) >= 2 {
			keep = 1 - s.LR*s.Decay
		}
		bufs := make([]*deviceParam, 3)
		for j, store := range []*Params{params, m, v} {
			b, err := rt.deviceCopy(store, name)
			if err != nil {
				return errors.Wrap(err, "adam")
			}
			bufs[j] = b
		}
		n := params.Shape(name).TotalSize()
		err := cuda.Elems(rt.cuda, "adam_f32", n, bufs[0].p, grads[i], bufs[1].p, bufs[2].p, n,
			float32(s.Beta1), float32(s.Beta2), float32(s.Eps), float32(step), float32(rc2), float32(s.Scale), float32(keep))
		if err != nil {
			return errors.Wrapf(err, "adam: %s", name)
		}
		for j, store := range []*Params{params, m, v} {
			store.Updated(name)
			bufs[j].n, bufs[j].ahead = store.versions[name].n, true
		}
	}
	return errors.Wrap(rt.cuda.Sync(), "adam")
}

// gradNode is the node of the named parameter's gradient, nil if none.
func (p *Program) gradNode(name string) *G.Node {
	for i, n := range p.params {
		if n == name {
			return p.grads[i]
		}
	}
	return nil
}

// deviceCopy is the runtime's device copy of the named parameter of store,
// made (and filled from the host) if it has none or its version is stale.
func (rt *Runtime) deviceCopy(store *Params, name string) (*deviceParam, error) {
	t, ver := store.values[name], store.versions[name]
	if t == nil || ver == nil {
		return nil, errors.Errorf("no parameter %s with values", name)
	}
	data, ok := t.Data().([]float32)
	if !ok {
		return nil, errors.Errorf("parameter %s is %v: the device holds float32", name, t.Dtype())
	}
	b, ok := rt.params[t]
	if !ok {
		p, err := rt.cuda.Alloc(4 * len(data))
		if err != nil {
			return nil, errors.Wrapf(err, "parameter %s on the device", name)
		}
		b = &deviceParam{p: p}
		rt.params[t] = b
	}
	if !b.loaded || b.n != ver.n {
		if err := rt.cuda.ToDevice(b.p, cuda.Float32Bytes(data)); err != nil {
			return nil, errors.Wrapf(err, "copying %s to the device", name)
		}
		b.loaded, b.n, b.ahead = true, ver.n, false
	}
	return b, nil
}

// Download copies the values of the parameters of stores whose device
// copies are newer than the host's (Program.Adam) to the host, for the
// host to read (a checkpoint, say). A CPU runtime has nothing to copy.
func (rt *Runtime) Download(stores ...*Params) error {
	for _, store := range stores {
		for _, name := range store.names {
			t := store.values[name]
			b, ok := rt.params[t]
			if !ok || !b.ahead {
				continue
			}
			data, _ := t.Data().([]float32)
			if err := rt.cuda.ToHost(cuda.Float32Bytes(data), b.p); err != nil {
				return errors.Wrapf(err, "copying %s to the host", name)
			}
			b.ahead = false
		}
	}
	return nil
}
