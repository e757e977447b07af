package graph

import (
	"fmt"
	"hash"
	"hash/fnv"

	"github.com/chewxy/hm"
	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// float is the element type every kernel of this package is written for.
type float interface{ ~float32 | ~float64 }

// kernelOp is the one Gorgonia Op type behind all of this package's ops. An op is
// a value of it built by a constructor that fills in the kernels; Gorgonia sees an
// Op and an SDOp (symbolic gradient). It writes into its own output tensor, so
// that a program allocates nothing after its first run.
//
// name must describe the op and all its parameters: Gorgonia merges nodes whose
// op hashes and children are equal, so two ops that compute different things
// must never share a name.
type kernelOp struct {
	name  string
	arity int
	// sig is the type signature, arguments then result. Type builds a fresh
	// function type from it at every call: Gorgonia returns function types to
	// a pool after inference, so one must never be kept.
	sig     []hm.Type
	shape   func(in []tensor.Shape) (tensor.Shape, error)
	forward func(out *tensor.Dense, in []*tensor.Dense) error
	// scalar replaces forward for ops whose output is a scalar.
	scalar func(in []*tensor.Dense) (float64, error)
	// diff returns the gradient of each input given the output's gradient,
	// nil where diffWRT is false. Nil diff means the op is not differentiable.
	diff    func(in G.Nodes, out, grad *G.Node) (G.Nodes, error)
	diffWRT []bool
	// out is the output tensor of this op, reused from run to run (Gorgonia's
	// TapeMachine forgets every value between runs): its slot in the arena
	// while the op's program is active, else allocated at the first run.
	out *tensor.Dense
	// trace, during a program's first run, is where the op records that it ran.
	trace *[]*kernelOp
}

var _ G.SDOp = (*kernelOp)(nil)

// Arity implements G.Op.
func (op *kernelOp) Arity() int { return op.arity }

// Type implements G.Op.
func (op *kernelOp) Type() hm.Type { return hm.NewFnType(op.sig...) }

// ReturnsPtr implements G.Op.
func (op *kernelOp) ReturnsPtr() bool { return false }

// CallsExtern implements G.Op.
func (op *kernelOp) CallsExtern() bool { return false }

// OverwritesInput implements G.Op.
func (op *kernelOp) OverwritesInput() int { return -1 }

// WriteHash implements G.Op.
func (op *kernelOp) WriteHash(h hash.Hash) { fmt.Fprint(h, op.name) }

// Hashcode implements G.Op.
func (op *kernelOp) Hashcode() uint32 {
	h := fnv.New32a()
	op.WriteHash(h)
	return h.Sum32()
}

// String implements fmt.Stringer.
func (op *kernelOp) String() string { return op.name }

// InferShape implements G.Op.
func (op *kernelOp) InferShape(ds ...G.DimSizer) (tensor.Shape, error) {
	shapes, err := G.DimSizersToShapes(ds)
	if err != nil {
		return nil, errors.Wrap(err, op.name)
	}
	s, err := op.shape(shapes)
	return s, errors.Wrap(err, op.name)
}

// Do implements G.Op. The output is written into the op's own tensor (its
// slot in the arena, or one allocated at the first run), never into memory
// the machine offers: where outputs lie is planned after a program's first
// run (see Program.plan), and that plan must not change from run to run.
func (op *kernelOp) Do(vals ...G.Value) (G.Value, error) {
	if op.trace != nil {
		*op.trace = append(*op.trace, op)
	}
	in, err := op.inputs(vals)
	if err != nil {
		return nil, err
	}
	if op.scalar != nil {
		v, err := op.scalar(in)
		if err != nil {
			return nil, errors.Wrap(err, op.name)
		}
		return scalarValue(floatDtype(in), v), nil
	}
	shapes := make([]tensor.Shape, len(in))
	for i, t := range in {
		shapes[i] = t.Shape()
	}
	s, err := op.shape(shapes)
	if err != nil {
		return nil, errors.Wrap(err, op.name)
	}
	dt := floatDtype(in)
	if !fits(op.out, s, dt) {
		op.out = tensor.New(tensor.Of(dt), tensor.WithShape(s.Clone()...))
	}
	return op.out, errors.Wrap(op.forward(op.out, in), op.name)
}

// fits reports whether t can hold an output of shape s and type dt.
func fits(t *tensor.Dense, s tensor.Shape, dt tensor.Dtype) bool {
	return t != nil && t.Shape().Eq(s) && t.Dtype() == dt && !t.IsView()
}

// inputs checks the arity and turns every input into a contiguous dense tensor.
func (op *kernelOp) inputs(vals []G.Value) ([]*tensor.Dense, error) {
	if len(vals) != op.arity {
		return nil, errors.Errorf("%s: %d inputs, want %d", op.name, len(vals), op.arity)
	}
	in := make([]*tensor.Dense, len(vals))
	for i, v := range vals {
		d, ok := v.(*tensor.Dense)
		switch {
		case !ok:
			in[i] = scalarDense(v)
			if in[i] == nil {
				return nil, errors.Errorf("%s: input %d is a %T, want a tensor", op.name, i, v)
			}
		case d.IsView():
			in[i] = d.Materialize().(*tensor.Dense)
		default:
			in[i] = d
		}
	}
	return in, nil
}

// floatDtype is the element type of the first float input: the type of the output.
func floatDtype(in []*tensor.Dense) tensor.Dtype {
	for _, t := range in {
		if dt := t.Dtype(); dt == tensor.Float32 || dt == tensor.Float64 {
			return dt
		}
	}
	return tensor.Float64
}

// DiffWRT implements G.SDOp.
func (op *kernelOp) DiffWRT(n int) []bool {
	if op.diffWRT == nil {
		return make([]bool, n)
	}
	return op.diffWRT
}

// SymDiff implements G.SDOp.
func (op *kernelOp) SymDiff(in G.Nodes, out, grad *G.Node) (G.Nodes, error) {
	if op.diff == nil {
		return nil, errors.Errorf("%s is not differentiable", op.name)
	}
	return op.diff(in, out, grad)
}

// scalarValue wraps v as a Gorgonia scalar of type dt.
func scalarValue(dt tensor.Dtype, v float64) G.Value {
	if dt == tensor.Float32 {
		return G.NewF32(float32(v))
	}
	return G.NewF64(v)
}

// scalarDense turns a Gorgonia scalar into a tensor of shape (), nil if v is not a
// float scalar.
func scalarDense(v G.Value) *tensor.Dense {
	switch s := v.(type) {
	case *G.F32:
		return tensor.New(tensor.FromScalar(float32(*s)))
	case *G.F64:
		return tensor.New(tensor.FromScalar(float64(*s)))
	}
	return nil
}

// scalarOf reads the single element of a scalar (or one-element) tensor.
func scalarOf(t *tensor.Dense) float64 {
	switch d := t.Data().(type) {
	case float32:
		return float64(d)
	case float64:
		return d
	case []float32:
		return float64(d[0])
	case []float64:
		return d[0]
	}
	return 0
}

// tensorType is the Gorgonia type of a float tensor with d dimensions.
func tensorType(d int) hm.Type {
	if d == 0 {
		return hm.TypeVariable('a')
	}
	return G.TensorType{Dims: d, Of: hm.TypeVariable('a')}
}

// intTensorType is the Gorgonia type of an int tensor with d dimensions.
func intTensorType(d int) hm.Type { return G.TensorType{Dims: d, Of: tensor.Int} }

// signature is the type signature of an op taking args and returning ret.
func signature(ret hm.Type, args ...hm.Type) []hm.Type {
	return append(args, ret)
}

// apply adds op to the graph of its inputs.
func apply(op *kernelOp, in ...*G.Node) (*G.Node, error) {
	n, err := G.ApplyOp(op, in...)
	return n, errors.Wrap(err, op.name)
}
