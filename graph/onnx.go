package graph

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// ONNXOpset is the version of ONNX's default operator set ("ai.onnx")
// that ops' ONNX forms are written in.
const ONNXOpset = 17

// ONNXForm is an op's form in ONNX (Op.ONNX), declared beside its kernels:
// it adds to b the ONNX nodes that compute, from the op's inputs x, the
// op's output y (of y.Dtype and y.Shape; y.Name is empty) as its forward
// kernel does, and returns the name of the value that holds it (a value of
// its nodes, or of x). The shapes are those the op was applied to. Its error says what
// its nodes cannot express (ExportONNX then writes nothing more).
type ONNXForm func(b *ONNXBuilder, y ONNXValue, x []ONNXValue) (string, error)

// ONNXValue is one value of an ONNX graph as a form sees it: its name,
// element type (the graph's float type, or tensor.Int: ONNX's int64) and
// shape.
type ONNXValue struct {
	Name  string
	Dtype tensor.Dtype
	Shape tensor.Shape
}

// ONNXWriter is what ExportONNX writes a graph to: an ONNX model under
// construction, which an exporter (package graph/onnx) turns into
// protobuf. Each call's error names what it refused.
type ONNXWriter interface {
	// Input declares an input of the graph.
	Input(v ONNXValue) error
	// Initializer adds the constant t under name: a parameter, a constant
	// of the graph or of a form.
	Initializer(name string, t *tensor.Dense) error
	// Node adds a node of the operator op of ONNXOpset reading the values
	// in ("" for an optional input left out) and writing out, with the
	// attributes attrs: int, []int, float64 or string values by name.
	Node(op string, in, out []string, attrs map[string]any) error
	// Output declares an output of the graph, a value already written.
	Output(v ONNXValue) error
}

// ONNXBuilder is what ONNX forms add nodes with: it writes them to an
// ONNXWriter, makes the names of the values between them and keeps the
// first error, after which it writes nothing.
type ONNXBuilder struct {
	w     ONNXWriter
	dtype tensor.Dtype
	// prefix starts the names of the values the current form makes: the
	// name of its output.
	prefix string
	used   map[string]bool
	n      int
	err    error
}

// Dtype is the graph's float type, the element type of its float values.
func (b *ONNXBuilder) Dtype() tensor.Dtype { return b.dtype }

// Node adds a node of the ONNX operator op reading in and writing out,
// with the attributes attrs (nil for none): see ONNXWriter.Node.
func (b *ONNXBuilder) Node(op string, in, out []string, attrs map[string]any) {
	if b.err == nil {
		b.err = errors.Wrapf(b.w.Node(op, in, out, attrs), "ONNX node %s", op)
	}
}

// Op adds a node of the ONNX operator op with one output, a new value,
// and returns the output's name.
func (b *ONNXBuilder) Op(op string, in []string, attrs map[string]any) string {
	y := b.fresh(op)
	b.Node(op, in, []string{y}, attrs)
	return y
}

// Constant adds the constant t and returns its name.
func (b *ONNXBuilder) Constant(t *tensor.Dense) string {
	name := b.fresh("const")
	if b.err == nil {
		b.err = errors.Wrapf(b.w.Initializer(name, t), "ONNX constant %s", name)
	}
	return name
}

// Ints adds the constant int64 vector v (a shape, axes, indices) and
// returns its name.
func (b *ONNXBuilder) Ints(v ...int) string {
	return b.Constant(tensor.New(tensor.WithShape(len(v)), tensor.WithBacking(slices.Clone(v))))
}

// Scalar adds the constant v, of shape () in the graph's float type, and
// returns its name.
func (b *ONNXBuilder) Scalar(v float64) string {
	if b.dtype == tensor.Float32 {
		return b.Constant(tensor.New(tensor.FromScalar(float32(v))))
	}
	return b.Constant(tensor.New(tensor.FromScalar(v)))
}

// Cast adds a node that converts v to the element type dt (ONNX's Cast)
// and returns its output's name.
func (b *ONNXBuilder) Cast(v string, dt tensor.Dtype) string {
	to, err := ONNXElemType(dt)
	if b.err == nil {
		b.err = err
	}
	return b.Op("Cast", []string{v}, map[string]any{"to": to})
}

// ONNXElemType is the number of ONNX's element type (TensorProto.DataType)
// of dt: FLOAT for float32, DOUBLE for float64, INT64 for Go's int (token
// ids), which is 64 bits where this project runs.
func ONNXElemType(dt tensor.Dtype) (int, error) {
	switch dt {
	case tensor.Float32:
		return 1, nil
	case tensor.Float64:
		return 11, nil
	case tensor.Int, tensor.Int64:
		return 7, nil
	}
	return 0, errors.Errorf("element type %v has no ONNX form here (want float32, float64 or int)", dt)
}

// fresh is a new value name, the current prefix and hint numbered.
func (b *ONNXBuilder) fresh(hint string) string {
	for {
		b.n++
		name := fmt.Sprintf("%s/%s_%d", b.prefix, hint, b.n)
		if !b.used[name] {
			b.used[name] = true
			return name
		}
	}
}

// ExportONNX writes to w the ONNX graph that computes the named outputs
// of the graph of s from its inputs: the inputs the outputs depend on
// (Scope.Input), the parameters and constants they read as initializers
// (parameters under their names), every op between as its ONNX form
// (Op.ONNX), and the outputs under their names. Before it writes anything
// it checks that every op has an ONNX form, naming those that do not (ops
// of gradients, a user's op declared without one), and that no output is
// named as an input or a parameter. The graph's shapes are fixed, as they
// were built.
func ExportONNX(s *Scope, outputs map[string]*G.Node, w ONNXWriter) error {
	if err := s.Err(); err != nil {
		return errors.Wrap(err, "building the graph")
	}
	order, err := onnxOrder(s.b.g, outputs)
	if err != nil {
		return err
	}
	names, taken, err := s.leafNames(order, outputs)
	if err != nil {
		return err
	}
	b := &ONNXBuilder{w: w, dtype: s.Dtype(), used: taken}
	for _, n := range order {
		if err := s.exportNode(b, n, names); err != nil {
			return err
		}
	}
	return exportOutputs(b, outputs, names)
}

// onnxOrder is the nodes the outputs depend on, inputs before the nodes
// that read them; an op without an ONNX form is the error, naming every
// such op.
func onnxOrder(g *G.ExprGraph, outputs map[string]*G.Node) (G.Nodes, error) {
	if len(outputs) == 0 {
		return nil, errors.New("exporting to ONNX: no outputs")
	}
	need := map[*G.Node]bool{}
	var visit func(n *G.Node)
	visit = func(n *G.Node) {
		if !need[n] {
			need[n] = true
			for _, c := range children(n) {
				visit(c)
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(outputs)) {
		if outputs[name] == nil {
			return nil, errors.Errorf("exporting to ONNX: output %s is nil", name)
		}
		visit(outputs[name])
	}
	sorted, err := G.Sort(g)
	if err != nil {
		return nil, errors.Wrap(err, "sorting the graph")
	}
	slices.Reverse(sorted)
	order := slices.DeleteFunc(sorted, func(n *G.Node) bool { return !need[n] })
	return order, formless(order)
}

// formless names the ops among nodes that have no ONNX form.
func formless(nodes G.Nodes) error {
	missing := map[string]bool{}
	for _, n := range nodes {
		if n.Op() == nil {
			continue
		}
		if k, ok := n.Op().(*kernelOp); !ok {
			missing[fmt.Sprintf("%v (Gorgonia's)", n.Op())] = true
		} else if k.def.ONNX == nil {
			missing[k.def.Name] = true
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return errors.Errorf("exporting to ONNX: no ONNX form (graph.Op.ONNX) for op %s", strings.Join(slices.Sorted(maps.Keys(missing)), ", op "))
}

// leafNames names the value of each leaf among order in the ONNX graph:
// inputs and parameters by their names, constants by theirs where these
// are free; taken is the names given and the outputs'. An output named as
// an input or a parameter is an error.
func (s *Scope) leafNames(order G.Nodes, outputs map[string]*G.Node) (names map[*G.Node]string, taken map[string]bool, err error) {
	names, taken = map[*G.Node]string{}, map[string]bool{}
	for _, n := range order {
		if n.Op() == nil && s.leafKind(n) != leafConstant {
			names[n], taken[n.Name()] = n.Name(), true
		}
	}
	for out := range outputs {
		if taken[out] {
			return nil, nil, errors.Errorf("exporting to ONNX: output %s is named as an input or a parameter of the graph", out)
		}
		taken[out] = true
	}
	for _, n := range order {
		if n.Op() == nil && names[n] == "" {
			v := n.Name()
			for taken[v] {
				v += "_"
			}
			names[n], taken[v] = v, true
		}
	}
	return names, taken, nil
}

// leaf is what a node without an op is.
type leaf int

const (
	leafInput leaf = iota
	leafParam
	leafConstant
)

// leafKind says whether the leaf n is an input, a parameter or a constant.
func (s *Scope) leafKind(n *G.Node) leaf {
	switch {
	case s.b.inputs[n.Name()] == n:
		return leafInput
	case s.b.nodes[n.Name()] == n:
		return leafParam
	}
	return leafConstant
}

// exportNode writes the node n: a leaf as an input or an initializer, an
// op's node as its ONNX form, whose output's name it adds to names.
func (s *Scope) exportNode(b *ONNXBuilder, n *G.Node, names map[*G.Node]string) error {
	y := ONNXValue{Name: names[n], Dtype: n.Dtype(), Shape: n.Shape()}
	if n.Op() == nil {
		return errors.Wrapf(s.exportLeaf(b, n, y), "exporting %s to ONNX", y.Name)
	}
	k := n.Op().(*kernelOp) // formless checked
	in := children(n)
	x := make([]ONNXValue, len(in))
	for i, c := range in {
		x[i] = ONNXValue{Name: names[c], Dtype: c.Dtype(), Shape: c.Shape()}
	}
	b.prefix = fmt.Sprintf("v%d", n.ID())
	v, err := k.def.ONNX(b, y, x)
	if err == nil {
		err = b.err
	}
	names[n] = v
	return errors.Wrapf(err, "exporting op %s to ONNX", k.def.Name)
}

// exportLeaf writes the leaf n, whose value is y.
func (s *Scope) exportLeaf(b *ONNXBuilder, n *G.Node, y ONNXValue) error {
	if s.leafKind(n) == leafInput {
		return b.w.Input(y)
	}
	t, ok := n.Value().(*tensor.Dense)
	if !ok || t == nil {
		return errors.Errorf("its value is %T, want a tensor (a parameter store of shapes alone has no values)", n.Value())
	}
	return b.w.Initializer(y.Name, t)
}

// exportOutputs writes each output, the value of its node copied to its
// name (an Identity node, which ONNX Runtime removes), and declares it.
func exportOutputs(b *ONNXBuilder, outputs map[string]*G.Node, names map[*G.Node]string) error {
	for _, name := range slices.Sorted(maps.Keys(outputs)) {
		n := outputs[name]
		b.Node("Identity", []string{names[n]}, []string{name}, nil)
		if b.err != nil {
			return errors.Wrapf(b.err, "exporting output %s to ONNX", name)
		}
		if err := b.w.Output(ONNXValue{Name: name, Dtype: n.Dtype(), Shape: n.Shape()}); err != nil {
			return errors.Wrapf(err, "exporting output %s to ONNX", name)
		}
	}
	return nil
}
