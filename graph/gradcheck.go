package graph

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// GradCheck compares symbolic gradients (gorgonia.Grad through the ops'
// backward passes) with central finite differences in float64:
//
//	∂L/∂θ_i ≈ (L(θ + h·e_i) - L(θ - h·e_i)) / 2h
//
// Build adds the graph to check in a float64 scope and returns its output;
// an output that is not a scalar is reduced to L = Σ output ⊙ R with a fixed
// random R, so every element's gradient is exercised. Every parameter the graph
// creates is checked. Set, if not nil, fills the graph's inputs before each run.
// With Train, the graph is built in training mode and the dropout masks are
// drawn from the same seed at every run, so they do not change between the
// runs of one check.
//
// With Float32, the graph is also built in float32 from the same parameter
// values, and its output and gradients must agree with float64's to within
// Tol32 of the largest magnitude of each (the output, each parameter's
// gradient, but at least a hundredth of the largest gradient): that checks
// the float32 kernels against the float64 ones, which the finite differences
// check.
type GradCheck struct {
	Build func(s *Scope) *G.Node
	Set   func(p *Program) error
	Train bool
	Seed  uint64
	// Step is h (default 1e-6); MaxPerParam bounds the elements checked per
	// parameter (default 64; the first ones and then a random sample).
	Step        float64
	MaxPerParam int
	// RTol and ATol (defaults 1e-5 and 1e-8): an element passes when
	// |symbolic - numeric| ≤ ATol + RTol·max(|symbolic|, |numeric|).
	RTol, ATol float64
	Float32    bool
	Tol32      float64 // default 1e-4
}

// checked is a graph built for a check: its parameters, its program, and a
// run that sets the inputs and returns the loss.
type checked struct {
	params *Params
	prog   *Program
	run    func() (float64, error)
	scalar bool
}

// build builds and compiles the graph in element type dt.
func (c GradCheck) build(dt tensor.Dtype) (*checked, error) {
	rng := rand.New(rand.NewPCG(c.Seed, 1))
	params, err := NewParams(dt, rng)
	if err != nil {
		return nil, err
	}
	pcg := rand.NewPCG(c.Seed, 2)
	var opts []Option
	if c.Train {
		opts = append(opts, Training(rand.New(pcg)))
	}
	s := NewScope(params, opts...)
	out := c.Build(s)
	loss := c.scalar(s, out, rng)
	var outputs map[string]*G.Node
	if out != nil && !out.IsScalar() {
		outputs = map[string]*G.Node{checkedOutput: out}
	}
	prog, err := Compile(nil, s, loss, outputs)
	if err != nil {
		return nil, err
	}
	ch := &checked{params: params, prog: prog, scalar: outputs == nil}
	ch.run = func() (float64, error) {
		pcg.Seed(c.Seed, 2)
		if c.Set != nil {
			if err := c.Set(prog); err != nil {
				return 0, err
			}
		}
		if err := prog.Run(); err != nil {
			return 0, err
		}
		return prog.Loss()
	}
	return ch, nil
}

// checkedOutput names the output of the graph under check.
const checkedOutput = "gradcheck.output"

// output is the checked graph's output after a run.
func (ch *checked) output() []float64 {
	if ch.scalar {
		l, _ := ch.prog.Loss() // read after a run that gave it
		return []float64{l}
	}
	return Float64s(ch.prog.Output(checkedOutput))
}

// Run performs the check and returns an error listing the elements that fail.
func (c GradCheck) Run() error {
	c.defaults()
	ch, err := c.build(tensor.Float64)
	if err != nil {
		return err
	}
	defer ch.prog.Close()
	symbolic, err := c.symbolic(ch.prog, ch.run)
	if err != nil {
		return err
	}
	var fails []string
	if c.Float32 {
		if fails, err = c.compare32(ch, symbolic); err != nil {
			return err
		}
	}
	rng := rand.New(rand.NewPCG(c.Seed, 3))
	for _, name := range ch.prog.ParamNames() {
		// checkParam changes the parameter in place between runs.
		run := func() (float64, error) {
			ch.params.Updated(name)
			return ch.run()
		}
		f, err := c.checkParam(ch.params.Value(name).Data().([]float64), symbolic[name], run, rng)
		if err != nil {
			return err
		}
		for _, msg := range f {
			fails = append(fails, name+msg)
		}
	}
	if len(fails) > 0 {
		return errors.Errorf("%d elements differ (gradients from finite differences, float32 from float64):\n%s", len(fails), strings.Join(fails[:min(len(fails), 10)], "\n"))
	}
	return nil
}

// compare32 runs the graph in float32 with the float64 graph's parameter
// values and compares its output and gradients with the float64 ones
// (ch, just run, and symbolic).
func (c GradCheck) compare32(ch *checked, symbolic map[string][]float64) ([]string, error) {
	want := ch.output()
	ch32, err := c.build(tensor.Float32)
	if err != nil {
		return nil, errors.Wrap(err, "float32")
	}
	defer ch32.prog.Close()
	for _, name := range ch.params.Names() {
		if err := ch32.params.Set(name, ch.params.Value(name)); err != nil {
			return nil, errors.Wrap(err, "float32")
		}
	}
	if _, err := ch32.run(); err != nil {
		return nil, errors.Wrap(err, "float32")
	}
	fails := c.agree("float32 output", ch32.output(), want, 0)
	// A gradient that is zero in exact arithmetic (a key bias under softmax)
	// is rounding noise in float32: each is compared at least at a hundredth
	// of the largest gradient's scale.
	var all float64
	for _, g := range symbolic {
		all = math.Max(all, maxAbs(g))
	}
	for _, name := range ch32.prog.ParamNames() {
		fails = append(fails, c.agree("float32 gradient of "+name, Float64s(ch32.prog.Grad(name)), symbolic[name], all/100)...)
	}
	return fails, nil
}

// agree lists the elements of got that differ from want by more than Tol32
// times the largest magnitude in want (at least floor).
func (c GradCheck) agree(what string, got, want []float64, floor float64) []string {
	if len(got) != len(want) {
		return []string{fmt.Sprintf("%s: %d values, want %d", what, len(got), len(want))}
	}
	scale := math.Max(maxAbs(want), floor)
	var fails []string
	for i, w := range want {
		if d := math.Abs(got[i] - w); !(d <= c.Tol32*scale) {
			fails = append(fails, fmt.Sprintf("%s[%d]: %.8g, float64 %.8g", what, i, got[i], w))
		}
	}
	return fails
}

// maxAbs is the largest magnitude in v.
func maxAbs(v []float64) float64 {
	var m float64
	for _, x := range v {
		m = math.Max(m, math.Abs(x))
	}
	return m
}

// symbolic runs the program twice, first with every op writing a tensor of
// its own, then in the memory its plan shares between ops, and returns the
// gradients of the second run, which must equal the first bit for bit: this
// checks the plan (and that no kernel reads what a previous run left).
func (c *GradCheck) symbolic(prog *Program, run func() (float64, error)) (map[string][]float64, error) {
	grads := func() (map[string][]float64, error) {
		loss, err := run()
		if err != nil {
			return nil, err
		}
		g := map[string][]float64{LossOutput: {loss}}
		for _, name := range prog.ParamNames() {
			g[name] = Float64s(prog.Grad(name))
		}
		return g, nil
	}
	prog.ownMemory(true)
	first, err := grads()
	if err != nil {
		return nil, err
	}
	prog.ownMemory(false)
	second, err := grads()
	if err != nil {
		return nil, err
	}
	for name, g := range first {
		if !slices.Equal(g, second[name]) {
			return nil, errors.Errorf("%s differs between a run with memory of its own per op and one in the planned arena", name)
		}
	}
	delete(second, LossOutput)
	return second, nil
}

func (c *GradCheck) defaults() {
	if c.Step == 0 {
		c.Step = 1e-6
	}
	if c.MaxPerParam == 0 {
		c.MaxPerParam = 64
	}
	if c.RTol == 0 {
		c.RTol = 1e-5
	}
	if c.ATol == 0 {
		c.ATol = 1e-8
	}
	if c.Tol32 == 0 {
		c.Tol32 = 1e-4
	}
}

// scalar reduces out to a scalar by a fixed random projection.
func (c GradCheck) scalar(s *Scope, out *G.Node, rng *rand.Rand) *G.Node {
	if out == nil || out.IsScalar() {
		return out
	}
	r := make([]float64, out.Shape().TotalSize())
	for i := range r {
		r[i] = rng.NormFloat64()
	}
	proj := s.Constant("gradcheck.projection", FromFloat64s(s.Dtype(), r, out.Shape()...))
	return s.do(func() (*G.Node, error) {
		prod, err := G.HadamardProd(out, proj)
		if err != nil {
			return nil, err
		}
		return G.Sum(prod)
	}, out)
}

// checkParam compares the symbolic gradient of one parameter with central
// differences at up to MaxPerParam of its elements.
func (c GradCheck) checkParam(theta, symbolic []float64, run func() (float64, error), rng *rand.Rand) ([]string, error) {
	var fails []string
	for _, i := range c.sample(len(theta), rng) {
		orig := theta[i]
		theta[i] = orig + c.Step
		up, err := run()
		if err != nil {
			return nil, err
		}
		theta[i] = orig - c.Step
		down, err := run()
		theta[i] = orig
		if err != nil {
			return nil, err
		}
		numeric := (up - down) / (2 * c.Step)
		if d := math.Abs(symbolic[i] - numeric); !(d <= c.ATol+c.RTol*math.Max(math.Abs(symbolic[i]), math.Abs(numeric))) {
			fails = append(fails, fmt.Sprintf("[%d]: symbolic %.8g, numeric %.8g", i, symbolic[i], numeric))
		}
	}
	return fails, nil
}

// sample picks the element indices to check: all of them if few, else the
// first MaxPerParam/2 and a random sample of the rest.
func (c GradCheck) sample(n int, rng *rand.Rand) []int {
	if n <= c.MaxPerParam {
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		return idx
	}
	idx := make([]int, 0, c.MaxPerParam)
	for i := range c.MaxPerParam / 2 {
		idx = append(idx, i)
	}
	for len(idx) < c.MaxPerParam {
		idx = append(idx, c.MaxPerParam/2+rng.IntN(n-c.MaxPerParam/2))
	}
	return idx
}
