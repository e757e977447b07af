package graph

import (
	"slices"

	"github.com/chewxy/hm"
	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Float is the element type of an op's kernels.
type Float interface{ float32 | float64 }

// Op defines an operation of the graph: a name, a shape rule, forward and
// backward kernels for float32 and float64, and the inputs it is
// differentiable with respect to. Apply adds it to a graph, where Gorgonia
// sees an Op and an SDOp (symbolic gradient); this package's own ops are
// defined the same way.
//
// An op's float inputs all have the graph's element type, which its output
// takes (unless IntOutput); int inputs (token ids, targets) are read through
// Operand.Ints. Each node of the graph writes its output into a tensor of its
// own, laid out in memory when its program is compiled, so a program
// allocates no tensors when it runs: kernels overwrite every element of y.
//
// A value the backward pass needs from the forward pass is an input or the
// output of the op, saved with Save and SaveOutput, never state shared by
// the kernels: the graph's edges then order the computation.
type Op struct {
	// Name describes the op and every parameter it closes over: Gorgonia
	// merges nodes whose op names and inputs are equal, so two ops that
	// compute different things must never share a name.
	Name  string
	Arity int
	// Shape is the output's shape given the inputs' shapes, checked when the
	// op is applied. A scalar shape (tensor.ScalarShape()) makes a scalar
	// node, such as a loss.
	Shape func(in []tensor.Shape) (tensor.Shape, error)
	// IntOutput makes the output an int tensor, written to Operand.Ints.
	IntOutput bool
	// Type is the graph's float type (Scope.Dtype) for an op whose inputs
	// are all ints (a mask made from token ids), which have none to take it
	// from; ignored when an input is a float.
	Type tensor.Dtype
	F32  Kernels[float32]
	F64  Kernels[float64]
	// Device are the op's kernels on a device (a Backend, such as
	// graph/cuda's GPU); programs that use an op without them run on the
	// CPU only.
	Device DeviceKernels
	// ONNX is the op's form in ONNX, which ExportONNX writes for its
	// nodes; a graph holding an op without one (a gradient's, say) does
	// not export.
	ONNX ONNXForm
	// BF16, where set, replaces F32's Forward in programs compiled with
	// BF16 products (see Precision): the kernels of matrix products.
	BF16 Kernels[float32]
	// Diff says which inputs the op is differentiable with respect to (nil:
	// none). The gradients come from Grad when it is set, else from the
	// Backward kernels.
	Diff []bool
	// Save lists the inputs whose elements the Backward kernels read, and
	// SaveOutput says whether they read the output: only these are kept for,
	// and wired into, the backward pass. Every input's shape is known there.
	Save       []int
	SaveOutput bool
	// Grad, if set, builds the gradients of the inputs x (nil where Diff is
	// false) from other ops, given the output y and its gradient dy.
	Grad func(x G.Nodes, y, dy *G.Node) (G.Nodes, error)
}

// Kernels are an op's computations in one element type.
type Kernels[T Float] struct {
	// Forward writes the output y from the inputs x.
	Forward func(y Operand[T], x []Operand[T]) error
	// Backward writes into dx the gradient of input i, given the inputs x
	// (elements only for those saved), the output y (if saved) and the
	// output's gradient dy.
	Backward func(i int, dx Operand[T], x []Operand[T], y, dy Operand[T]) error
}

// Operand is what a kernel sees of one input or output: its shape and its
// elements, in Data for a float tensor or in Ints for an int tensor. A scalar
// has shape () and one element.
type Operand[T Float] struct {
	Shape tensor.Shape
	Data  []T
	Ints  []int
}

// SameShape is the shape rule of elementwise ops: every input has the
// same shape, which the output takes. Inputs of different shapes are an
// error naming the first that differs.
func SameShape(in []tensor.Shape) (tensor.Shape, error) {
	if len(in) == 0 {
		return nil, errors.New("SameShape: no inputs")
	}
	for i, s := range in[1:] {
		if !slices.Equal(s, in[0]) {
			return nil, errors.Errorf("input %d has shape %v and input 0 %v: want the same shape", i+1, s, in[0])
		}
	}
	return in[0].Clone(), nil
}

// firstShape is the shape rule of ops whose output has their first
// input's shape, the others' shapes checked by the op itself.
func firstShape(in []tensor.Shape) (tensor.Shape, error) { return in[0].Clone(), nil }

// Apply adds the op to the graph of its inputs and returns its output. The
// definition, the inputs' number and element types and the output's shape are
// checked here, when the graph is built.
func (op Op) Apply(in ...*G.Node) (*G.Node, error) {
	n, err := op.node(in)
	if err != nil {
		return nil, errors.Wrap(err, op.Name)
	}
	out, err := G.ApplyOp(n, in...)
	return out, errors.Wrap(err, op.Name)
}

// Apply is op.Apply recorded in s.
func (s *Scope) Apply(op Op, in ...*G.Node) *G.Node {
	return s.do(func() (*G.Node, error) { return op.Apply(in...) }, in...)
}

// node checks the op against its inputs and makes the Gorgonia op of one node.
func (op Op) node(in []*G.Node) (*kernelOp, error) {
	if err := op.check(len(in)); err != nil {
		return nil, err
	}
	dt, err := floatType(in, op.Type)
	if err != nil {
		return nil, err
	}
	if err := op.checkKernels(dt); err != nil {
		return nil, err
	}
	shapes := make([]tensor.Shape, len(in))
	sig := make([]hm.Type, len(in)+1)
	for i, x := range in {
		shapes[i] = x.Shape().Clone()
		sig[i] = nodeType(x.Dtype(), x.Dims())
	}
	s, err := op.Shape(shapes)
	if err != nil {
		return nil, err
	}
	outType := dt
	if op.IntOutput {
		outType = tensor.Int
	}
	sig[len(in)] = nodeType(outType, len(s))
	if !hasFloat(in) {
		sig[len(in)] = concreteType(outType, len(s)) // no float input to fill a type variable
	}
	def := op
	return &kernelOp{def: &def, dtype: dt, outType: outType, in: shapes, shape: s.Clone(), sig: sig, run: hostRunner{}}, nil
}

// check validates the definition for n inputs.
func (op Op) check(n int) error {
	switch {
	case op.Name == "":
		return errors.New("an op needs a name")
	case op.Shape == nil:
		return errors.New("no shape rule")
	case n != op.Arity:
		return errors.Errorf("%d inputs, want %d", n, op.Arity)
	case op.Diff != nil && len(op.Diff) != op.Arity:
		return errors.Errorf("Diff has %d entries for %d inputs", len(op.Diff), op.Arity)
	}
	for _, i := range op.Save {
		if i < 0 || i >= op.Arity {
			return errors.Errorf("saved input %d out of range [0, %d)", i, op.Arity)
		}
	}
	return nil
}

// checkKernels checks that the op has the kernels a graph of type dt needs.
func (op Op) checkKernels(dt tensor.Dtype) error {
	fwd, bwd := op.F64.Forward != nil, op.F64.Backward != nil
	if dt == tensor.Float32 {
		fwd, bwd = op.F32.Forward != nil, op.F32.Backward != nil
	}
	if !fwd {
		return errors.Errorf("no %v forward kernel", dt)
	}
	if op.Grad == nil && !bwd && op.differentiable() {
		return errors.Errorf("differentiable without Grad or a %v backward kernel", dt)
	}
	return nil
}

// differentiable reports whether any input has a gradient.
func (op Op) differentiable() bool {
	for _, d := range op.Diff {
		if d {
			return true
		}
	}
	return false
}

// floatType is the element type shared by the float inputs, the graph's,
// or else given, if it is a float type.
func floatType(in []*G.Node, given tensor.Dtype) (tensor.Dtype, error) {
	var dt tensor.Dtype
	for i, x := range in {
		if x == nil {
			return dt, errors.Errorf("input %d is nil", i)
		}
		switch t := x.Dtype(); {
		case t != tensor.Float32 && t != tensor.Float64:
			if t != tensor.Int {
				return dt, errors.Errorf("input %d (%s) is %v: want float32, float64 or int", i, x.Name(), t)
			}
		case dt == tensor.Dtype{}:
			dt = t
		case t != dt:
			return dt, errors.Errorf("input %d (%s) is %v, an earlier input %v: a graph has one float type", i, x.Name(), t, dt)
		}
	}
	if dt == (tensor.Dtype{}) && (given == tensor.Float32 || given == tensor.Float64) {
		return given, nil
	}
	if dt == (tensor.Dtype{}) {
		return dt, errors.New("no float input to take the element type from, and no Type")
	}
	return dt, nil
}

// nodeType is the Gorgonia type of a node of element type dt and d
// dimensions; floats are the type variable a, which the graph's type fills.
func nodeType(dt tensor.Dtype, d int) hm.Type {
	var of hm.Type = hm.TypeVariable('a')
	if dt != tensor.Float32 && dt != tensor.Float64 {
		of = dt
	}
	if d == 0 {
		return of
	}
	return G.TensorType{Dims: d, Of: of}
}

// hasFloat reports whether any of in is a float node.
func hasFloat(in []*G.Node) bool {
	for _, x := range in {
		if t := x.Dtype(); t == tensor.Float32 || t == tensor.Float64 {
			return true
		}
	}
	return false
}

// concreteType is the Gorgonia type of a node of element type dt and d
// dimensions, dt itself rather than a type variable.
func concreteType(dt tensor.Dtype, d int) hm.Type {
	if d == 0 {
		return dt
	}
	return G.TensorType{Dims: d, Of: dt}
}
