package graph

import (
	"fmt"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// gradOp is the op that runs the Backward kernels for input i of n, whose
// inputs are the saved inputs, the output if saved, and the output's gradient.
func (n *kernelOp) gradOp(i int) Op {
	def := n.def
	xShape := n.in[i].Clone()
	arity := len(def.Save) + 1
	if def.SaveOutput {
		arity++
	}
	return Op{
		Name:   fmt.Sprintf("%s/grad%d", def.Name, i),
		Arity:  arity,
		Shape:  func([]tensor.Shape) (tensor.Shape, error) { return xShape.Clone(), nil },
		F32:    Kernels[float32]{Forward: backwardKernel(def.F32.Backward, def, i, n.in)},
		F64:    Kernels[float64]{Forward: backwardKernel(def.F64.Backward, def, i, n.in)},
		Device: DeviceKernels{Forward: deviceBackward(def.Device.Backward, def, i, n.in)},
	}
}

// deviceBackward is backwardKernel for the device Backward kernel.
func deviceBackward(back func(*DeviceCall, int, DeviceOperand, []DeviceOperand, DeviceOperand, DeviceOperand) error, def *Op, i int, shapes []tensor.Shape) func(*DeviceCall, DeviceOperand, []DeviceOperand) error {
	if back == nil {
		return nil
	}
	x := make([]DeviceOperand, len(shapes))
	return func(d *DeviceCall, dx DeviceOperand, args []DeviceOperand) error {
		for j, s := range shapes {
			x[j] = DeviceOperand{Shape: s}
		}
		for k, j := range def.Save {
			x[j] = args[k]
		}
		var y DeviceOperand
		if def.SaveOutput {
			y = args[len(def.Save)]
		}
		return back(d, i, dx, x, y, args[len(args)-1])
	}
}

// backwardKernel calls the Backward kernel of input i with the operands of
// the forward pass rebuilt from a gradient node's inputs: the saved inputs,
// the output if saved, then dy.
func backwardKernel[T Float](back func(int, Operand[T], []Operand[T], Operand[T], Operand[T]) error, def *Op, i int, shapes []tensor.Shape) func(Operand[T], []Operand[T]) error {
	if back == nil {
		return nil
	}
	x := make([]Operand[T], len(shapes))
	return func(dx Operand[T], args []Operand[T]) (err error) {
		defer clear(x) // keep no tensor alive between runs (see Program.release)
		defer func() {
			if r := recover(); r != nil {
				err = errors.Errorf("the Backward kernel of input %d panicked: %v (it is given the elements of the inputs Op.Save lists, %v, and of the output if Op.SaveOutput, %t; of the other inputs only their shapes)",
					i, r, def.Save, def.SaveOutput)
			}
		}()
		for j, s := range shapes {
			x[j] = Operand[T]{Shape: s}
		}
		for k, j := range def.Save {
			x[j] = args[k]
		}
		var y Operand[T]
		if def.SaveOutput {
			y = args[len(def.Save)]
		}
		return back(i, dx, x, y, args[len(args)-1])
	}
}

// DiffWRT implements G.SDOp.
func (n *kernelOp) DiffWRT(arity int) []bool {
	if n.def.Diff == nil {
		return make([]bool, arity)
	}
	return n.def.Diff
}

// SymDiff implements G.SDOp: the op's Grad, or a node per differentiable
// input running its Backward kernel.
func (n *kernelOp) SymDiff(in G.Nodes, out, dy *G.Node) (G.Nodes, error) {
	def := n.def
	if !def.differentiable() {
		return nil, errors.Errorf("%s is not differentiable", def.Name)
	}
	if def.Grad != nil {
		return def.Grad(in, out, dy)
	}
	var args G.Nodes
	for _, j := range def.Save {
		args = append(args, in[j])
	}
	if def.SaveOutput {
		args = append(args, out)
	}
	args = append(args, dy)
	grads := make(G.Nodes, len(in))
	for i, d := range def.Diff {
		if !d {
			continue
		}
		g, err := n.gradOp(i).Apply(args...)
		if err != nil {
			return nil, err
		}
		grads[i] = g
	}
	return grads, nil
}
