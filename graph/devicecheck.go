package graph

import (
	"math"
	"math/rand/v2"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// DeviceCheck compares a graph's program on a device runtime with the same
// program on the CPU, of float32 parameters, with products in the device
// runtime's precision. Build adds the graph to a scope whose
// parameters are drawn from Seed, alike on both, and returns its output y;
// Set, if not nil, fills the inputs. Without Loss the outputs are compared;
// with Loss, the program also computes L = Σ y ⊙ c for a fixed c, and L and
// every parameter's gradient are compared too (L relative to Σ |y ⊙ c|, the
// terms it sums). A scalar y is the loss itself, compared with its
// gradients. Each program runs twice, and
// the second run's values count. Every element must agree to Tol (default
// 1e-5) relative, of itself or, for elements smaller than that, of a
// hundredth of the largest of its tensor on the CPU.
type DeviceCheck struct {
	Device *Runtime
	Build  func(s *Scope) *G.Node
	Set    func(p *Program) error
	Seed   uint64
	Loss   bool
	// Train builds the graph in training mode, its dropout masks drawn
	// from Seed: the same on both.
	Train bool
	Tol   float64
}

// Run runs the check, an error saying the first element that differs.
func (c DeviceCheck) Run() error {
	cpu, err := NewRuntime(DeviceCPU, c.Device.Precision())
	if err != nil {
		return err
	}
	want, err := c.run(cpu)
	if err != nil {
		return errors.Wrap(err, "on the CPU")
	}
	got, err := c.run(c.Device)
	if err != nil {
		return errors.Wrapf(err, "on %s", c.Device)
	}
	tol := c.Tol
	if tol == 0 {
		tol = 1e-5
	}
	for _, name := range want.names {
		if err := near(got.values[name], want.values[name], tol, want.floor[name]); err != nil {
			return errors.Wrap(err, name)
		}
	}
	return nil
}

// checkValues are a checked program's values by name, in order, and the
// magnitude below which each is compared absolutely (0: none).
type checkValues struct {
	names  []string
	values map[string][]float64
	floor  map[string]float64
}

// add records the values v of name.
func (v *checkValues) add(name string, vals []float64) {
	v.names = append(v.names, name)
	v.values[name] = vals
}

// run builds, compiles and runs the check's program on rt.
func (c DeviceCheck) run(rt *Runtime) (*checkValues, error) {
	params, err := NewParams(tensor.Float32, rand.New(rand.NewPCG(c.Seed, 1)))
	if err != nil {
		return nil, err
	}
	var opts []Option
	if c.Train {
		opts = append(opts, Training(rand.New(rand.NewPCG(c.Seed, 2))))
	}
	s := NewScope(params, opts...)
	y := c.Build(s)
	var loss *G.Node
	scalar := y != nil && y.IsScalar()
	if scalar {
		loss = y
	} else if c.Loss && y != nil {
		n := y.Shape().TotalSize()
		w := make([]float64, n)
		for i := range w {
			w[i] = math.Sin(float64(i) + 1)
		}
		loss = s.Sum(s.Reshape(s.Mul(y, s.Constant("check_weights", FromFloat64s(tensor.Float32, w, y.Shape()...))), n), 0, false)
	}
	p, err := Compile(rt, s, loss, map[string]*G.Node{"y": y})
	if err != nil {
		return nil, err
	}
	defer p.Close()
	if c.Set != nil {
		if err := c.Set(p); err != nil {
			return nil, err
		}
	}
	for range 2 {
		if err := p.Run(); err != nil {
			return nil, err
		}
	}
	v := &checkValues{values: map[string][]float64{}, floor: map[string]float64{}}
	if !scalar {
		v.add("output", Float64s(p.Output("y")))
		// The loss sums the terms y ⊙ c: compared to their magnitude.
		for i, y := range v.values["output"] {
			v.floor["loss"] += math.Abs(y * math.Sin(float64(i)+1))
		}
	}
	if loss != nil {
		l, err := p.Loss()
		if err != nil {
			return nil, err
		}
		v.add("loss", []float64{l})
		for _, name := range p.ParamNames() {
			v.add("gradient of "+name, Float64s(p.Grad(name)))
		}
	}
	return v, nil
}

// near says which element of got differs from want by more than tol
// relative, of the element, of a hundredth of want's largest, or of floor.
func near(got, want []float64, tol, floor float64) error {
	if len(got) != len(want) {
		return errors.Errorf("%d elements, want %d", len(got), len(want))
	}
	big := 0.0
	for _, w := range want {
		big = max(big, math.Abs(w))
	}
	for i, w := range want {
		scale := max(math.Abs(w), big/100, floor, 1e-30)
		if d := math.Abs(got[i] - w); !(d <= tol*scale) {
			return errors.Errorf("element %d is %g, want %g (relative error %.3g, tolerance %g)", i, got[i], w, d/scale, tol)
		}
	}
	return nil
}
