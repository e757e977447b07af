package graph

import (
	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// devNode runs one op of a program on a device: its operands' places, made
// when the program is compiled, the sums that must run before it, and the
// memory its kernels keep (DeviceCall). The machine gets a placeholder for
// its value.
type devNode struct {
	x   *deviceExec
	op  *kernelOp
	in  []DeviceOperand
	y   DeviceOperand
	pre []sumLaunch
	// call is the DeviceCall its kernels run with; out the placeholder.
	call DeviceCall
	out  G.Value
}

// newNode is the runner of op, the op of n, after the sums pre.
func (x *deviceExec) newNode(n *G.Node, op *kernelOp, pre []sumLaunch) (*devNode, error) {
	dn := &devNode{x: x, op: op, pre: pre, y: DeviceOperand{Shape: op.shape, Ptr: x.loc[n]}}
	dn.call = DeviceCall{x: x, name: op.def.Name, bf16: x.p.rt.precision == BF16}
	for _, c := range children(n) {
		p, ok := x.loc[c]
		if !ok {
			return nil, errors.Errorf("op %s: input %v has no place on the device", op.def.Name, c)
		}
		dn.in = append(dn.in, DeviceOperand{Shape: c.Shape(), Ptr: p, Ints: x.hostInts(c)})
	}
	dn.out = placeholder(op)
	return dn, nil
}

// hostInts are the host's elements of c if it is an int input that the
// host feeds (whose tensor keeps its backing from run to run), else nil.
func (x *deviceExec) hostInts(c *G.Node) []int {
	for _, in := range x.inputs {
		if in.n == c {
			ints, _ := in.t.Data().([]int)
			return ints
		}
	}
	return nil
}

// placeholder is the value the machine gets for op's output on a device:
// of its kind (a scalar or a tensor of its element type), holding nothing
// that anything reads. The machine passes it to the ops that read the
// output, which read their device values instead, and to the sums of
// gorgonia.Grad, which compute nothing on the host (placeholderEngine).
func placeholder(op *kernelOp) G.Value {
	if op.shape.IsScalar() && !op.def.IntOutput {
		return G.NewF32(0)
	}
	return tensor.New(tensor.Of(op.outType), tensor.WithShape(1))
}

// do launches the sums before the op, then its device Forward kernel.
func (dn *devNode) do(op *kernelOp, _ []G.Value) (G.Value, error) {
	if err := dn.x.sums(dn.pre); err != nil {
		return nil, err
	}
	dn.call.gemms = 0
	if err := op.def.Device.Forward(&dn.call, dn.y, dn.in); err != nil {
		return nil, errors.Wrap(err, "on the device")
	}
	return dn.out, nil
}

// placeholderEngine is the tensor engine of the machines of programs on a
// device. Their values are placeholders, so the sums that gorgonia.Grad
// adds, which the machine runs as Add, compute nothing on the host: the
// device computes them (deviceExec.sums). Add returns the tensor the
// machine would find the sum in.
type placeholderEngine struct{ G.StandardEngine }

// Add implements tensor.Adder without arithmetic.
func (placeholderEngine) Add(a, _ tensor.Tensor, opts ...tensor.FuncOpt) (tensor.Tensor, error) {
	var o tensor.OpOpt
	for _, f := range opts {
		f(&o)
	}
	if r, _ := o.IncrReuse(); r != nil {
		return r, nil
	}
	return a, nil
}
