package graph

import (
	"hash"
	"hash/fnv"

	"github.com/chewxy/hm"
	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// kernelOp is the Gorgonia Op (and SDOp) of one node of an Op: the
// definition, the types and shapes it was applied to, and the node's own
// output tensor.
type kernelOp struct {
	def *Op
	// dtype is the graph's float type, in which the kernels run; outType
	// the output's element type (dtype, or int).
	dtype, outType tensor.Dtype
	in             []tensor.Shape
	shape          tensor.Shape
	// sig is the type signature, arguments then result. Type builds a fresh
	// function type from it at every call: Gorgonia returns function types to
	// a pool after inference, so one must never be kept.
	sig []hm.Type
	// out is the output tensor of this node, reused from run to run
	// (Gorgonia's TapeMachine forgets every value between runs): its slot in
	// the arena while the node's program is active.
	out *tensor.Dense
	// dense and scratch hold the inputs between runs (scratch as the
	// kernels' []Operand[T]), and one the element of a scalar output ([]T).
	dense        []*tensor.Dense
	scratch, one any
	// run runs the node's op where its program runs: its CPU kernels, or
	// its device kernels (set when the program is compiled).
	run nodeRunner
}

var _ G.SDOp = (*kernelOp)(nil)

// Arity implements G.Op.
func (n *kernelOp) Arity() int { return n.def.Arity }

// Type implements G.Op.
func (n *kernelOp) Type() hm.Type { return hm.NewFnType(n.sig...) }

// ReturnsPtr implements G.Op.
func (n *kernelOp) ReturnsPtr() bool { return false }

// CallsExtern implements G.Op.
func (n *kernelOp) CallsExtern() bool { return false }

// OverwritesInput implements G.Op.
func (n *kernelOp) OverwritesInput() int { return -1 }

// WriteHash implements G.Op.
func (n *kernelOp) WriteHash(h hash.Hash) { _, _ = h.Write([]byte(n.def.Name)) }

// Hashcode implements G.Op.
func (n *kernelOp) Hashcode() uint32 {
	h := fnv.New32a()
	n.WriteHash(h)
	return h.Sum32()
}

// String implements fmt.Stringer.
func (n *kernelOp) String() string { return n.def.Name }

// InferShape implements G.Op: the shape computed when the op was applied.
func (n *kernelOp) InferShape(...G.DimSizer) (tensor.Shape, error) { return n.shape.Clone(), nil }

// Do implements G.Op: it runs the op's kernels where the node's program
// runs (see nodeRunner). A kernel that panics (a user's op indexing past
// its operands) makes an error naming the op and its inputs' shapes, never a
// crash inside Gorgonia's machine.
func (n *kernelOp) Do(vals ...G.Value) (v G.Value, err error) {
	defer func() {
		if r := recover(); r != nil {
			v, err = nil, errors.Errorf("%s: its kernel panicked on inputs of shapes %v: %v", n.def.Name, n.in, r)
		}
	}()
	v, err = n.run.do(n, vals)
	return v, errors.Wrap(err, n.def.Name)
}

// forward runs f, the forward kernel in element type T, on the inputs in.
func forward[T Float](n *kernelOp, f func(Operand[T], []Operand[T]) error, in []*tensor.Dense) (G.Value, error) {
	x, _ := n.scratch.([]Operand[T])
	if len(x) != len(in) {
		x = make([]Operand[T], len(in))
		n.scratch = x
	}
	for i, t := range in {
		x[i] = operand[T](t)
	}
	defer clear(x)
	if n.shape.IsScalar() && !n.def.IntOutput {
		one, _ := n.one.([]T)
		if one == nil {
			one = make([]T, 1)
			n.one = one
		}
		if err := f(Operand[T]{Shape: tensor.ScalarShape(), Data: one}, x); err != nil {
			return nil, err
		}
		if v, ok := any(one[0]).(float32); ok {
			return G.NewF32(v), nil
		}
		return G.NewF64(any(one[0]).(float64)), nil
	}
	if !fits(n.out, n.shape, n.outType) {
		n.out = tensor.New(tensor.Of(n.outType), tensor.WithShape(n.shape.Clone()...))
	}
	return n.out, f(operand[T](n.out), x)
}

// operand is the kernels' view of t: its shape and elements.
func operand[T Float](t *tensor.Dense) Operand[T] {
	o := Operand[T]{Shape: t.Shape()}
	switch t.Dtype() {
	case tensor.Int:
		o.Ints = t.Ints()
	case tensor.Float32:
		o.Data, _ = any(t.Float32s()).([]T)
	case tensor.Float64:
		o.Data, _ = any(t.Float64s()).([]T)
	}
	return o
}

// fits reports whether t can hold an output of shape s and type dt.
func fits(t *tensor.Dense, s tensor.Shape, dt tensor.Dtype) bool {
	return t != nil && t.Shape().Eq(s) && t.Dtype() == dt && !t.IsView()
}

// inputs checks the arity and turns every input into a contiguous dense tensor.
func (n *kernelOp) inputs(vals []G.Value) ([]*tensor.Dense, error) {
	if len(vals) != n.def.Arity {
		return nil, errors.Errorf("%s: %d inputs, want %d", n.def.Name, len(vals), n.def.Arity)
	}
	if n.dense == nil {
		n.dense = make([]*tensor.Dense, len(vals))
	}
	in := n.dense
	for i, v := range vals {
		d, ok := v.(*tensor.Dense)
		switch {
		case !ok:
			in[i] = scalarDense(v)
			if in[i] == nil {
				return nil, errors.Errorf("%s: input %d is a %T, want a tensor", n.def.Name, i, v)
			}
		case d.IsView():
			in[i] = d.Materialize().(*tensor.Dense)
		default:
			in[i] = d
		}
	}
	return in, nil
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
