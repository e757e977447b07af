package graph

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/pkg/errors"
	"gorgonia.org/tensor"
)

// Params holds a model's parameters by hierarchical name
// ("encoder.layers.0.self_attn.q.weight"). One Params serves every graph built
// for the model: each graph's parameter node is bound to the same tensor, so an
// optimizer update is seen by all of them. Params are created the first time a
// graph asks for them, initialised from the Params' own random stream. Each
// parameter also has a version, counting the changes of its values (Set,
// Updated), by which the runtimes know when a packed copy of a weight is
// stale: a change made in place, through Value's tensor, must be announced
// with Updated.
type Params struct {
	dtype    tensor.Dtype
	rng      *rand.Rand
	names    []string
	shapes   map[string]tensor.Shape
	values   map[string]*tensor.Dense // nil for shapes-only stores
	versions map[string]*version
}

// NewParams returns an empty parameter store of element type dtype (tensor.Float32
// or tensor.Float64) whose parameters are initialised from rng.
func NewParams(dtype tensor.Dtype, rng *rand.Rand) (*Params, error) {
	if dtype != tensor.Float32 && dtype != tensor.Float64 {
		return nil, errors.Errorf("parameters of type %v: want float32 or float64", dtype)
	}
	if rng == nil {
		return nil, errors.New("parameters need a random number generator")
	}
	return &Params{dtype: dtype, rng: rng, shapes: map[string]tensor.Shape{}, values: map[string]*tensor.Dense{}, versions: map[string]*version{}}, nil
}

// NewParamShapes returns a store that records the names and shapes of the
// parameters a graph asks for without allocating them: for counting and
// summarizing large models. Graphs built on it cannot be run.
func NewParamShapes(dtype tensor.Dtype) *Params {
	return &Params{dtype: dtype, shapes: map[string]tensor.Shape{}}
}

// Dtype is the element type of every parameter.
func (p *Params) Dtype() tensor.Dtype { return p.dtype }

// Names lists the parameters in the order they were created.
func (p *Params) Names() []string { return slices.Clone(p.names) }

// Value is the tensor of the named parameter, nil if there is none (or the
// store holds shapes only). It is the parameter's own: a write into it must
// be announced with Updated before a program reads it again.
func (p *Params) Value(name string) *tensor.Dense { return p.values[name] }

// Shape is the shape of the named parameter, nil if there is none.
func (p *Params) Shape(name string) tensor.Shape { return p.shapes[name] }

// Count is the number of scalar parameters.
func (p *Params) Count() int {
	n := 0
	for _, s := range p.shapes {
		n += s.TotalSize()
	}
	return n
}

// Get returns the named parameter, creating it with init if it does not exist.
// An existing parameter of another shape is an error.
// A shapes-only store records the shape and returns nil.
func (p *Params) Get(name string, shape tensor.Shape, init Init) (*tensor.Dense, error) {
	if s, ok := p.shapes[name]; ok {
		if !s.Eq(shape) {
			return nil, errors.Errorf("parameter %s: asked for shape %v, have %v", name, shape, s)
		}
		return p.values[name], nil
	}
	if shape.TotalSize() <= 0 {
		return nil, errors.Errorf("parameter %s: shape %v has no elements", name, shape)
	}
	p.names = append(p.names, name)
	p.shapes[name] = shape.Clone()
	if p.values == nil {
		return nil, nil
	}
	vals := make([]float64, shape.TotalSize())
	init(p.rng, shape, vals)
	v := tensor.New(tensor.Of(p.dtype), tensor.WithShape(shape.Clone()...))
	copyFloats(v, vals)
	p.values[name] = v
	p.versions[name] = &version{}
	return v, nil
}

// Set overwrites the named parameter's values with t's, converting the element
// type, and counts a new version of them (see Updated). The parameter must
// exist with t's shape.
func (p *Params) Set(name string, t *tensor.Dense) error {
	v, ok := p.values[name]
	switch {
	case !ok:
		return errors.Errorf("no parameter %s with values", name)
	case !v.Shape().Eq(t.Shape()):
		return errors.Errorf("parameter %s has shape %v, value has %v", name, v.Shape(), t.Shape())
	}
	copyFloats(v, Float64s(t))
	p.versions[name].n++
	return nil
}

// Float64s returns the elements of a float32 or float64 tensor as float64s.
func Float64s(t *tensor.Dense) []float64 {
	switch d := t.Data().(type) {
	case []float64:
		return slices.Clone(d)
	case []float32:
		out := make([]float64, len(d))
		for i, v := range d {
			out[i] = float64(v)
		}
		return out
	}
	return nil
}

// copyFloats writes vals into t, converting to t's element type.
func copyFloats(t *tensor.Dense, vals []float64) {
	switch d := t.Data().(type) {
	case []float64:
		copy(d, vals)
	case []float32:
		for i, v := range vals {
			d[i] = float32(v)
		}
	}
}

// Init fills vals, the elements of a new parameter of the given shape.
type Init func(rng *rand.Rand, shape tensor.Shape, vals []float64)

// XavierUniform draws from U(-a, a) with a = sqrt(6 / (fanIn + fanOut)) (Glorot &
// Bengio, 2010); fanIn and fanOut are a matrix's two sizes.
func XavierUniform(rng *rand.Rand, shape tensor.Shape, vals []float64) {
	fan := shape[0]
	if len(shape) > 1 {
		fan += shape[1]
	}
	a := math.Sqrt(6 / float64(fan))
	for i := range vals {
		vals[i] = a * (2*rng.Float64() - 1)
	}
}

// Normal returns an Init drawing from N(0, std²).
func Normal(std float64) Init {
	return func(rng *rand.Rand, _ tensor.Shape, vals []float64) {
		for i := range vals {
			vals[i] = std * rng.NormFloat64()
		}
	}
}

// Zeros initialises every element to 0 (biases).
func Zeros(*rand.Rand, tensor.Shape, []float64) {}

// Ones initialises every element to 1 (normalization gains).
func Ones(_ *rand.Rand, _ tensor.Shape, vals []float64) {
	for i := range vals {
		vals[i] = 1
	}
}

// FromFloat64s returns a new tensor of element type dt and the given shape
// holding vals. Every size of shape must be positive (a Gorgonia tensor
// holds at least one element): it panics, saying so, otherwise.
func FromFloat64s(dt tensor.Dtype, vals []float64, shape ...int) *tensor.Dense {
	for _, d := range shape {
		if d < 1 {
			panic(fmt.Sprintf("graph.FromFloat64s: shape %v has a size below 1", shape))
		}
	}
	t := tensor.New(tensor.Of(dt), tensor.WithShape(shape...))
	copyFloats(t, vals)
	return t
}
