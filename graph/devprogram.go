package graph

import (
	"fmt"
	"slices"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph/internal/cuda"
)

// deviceProgram runs a program's ops on a device. The TapeMachine still runs
// the program: each of this package's ops, when the machine calls it,
// launches its device kernels on the device values of its inputs and output
// and hands the machine its host tensor untouched, as a placeholder. Every
// node's value has a place in device memory: the op outputs laid out in the
// arena plan lie at their offsets in one allocation of the plan's size;
// inputs, constants, scalars and the values of Gorgonia's own nodes that
// write no planned slot have buffers of their own; parameters lie in the
// runtime's buffers, shared by its programs. Gorgonia's nodes (the `+`
// nodes that gorgonia.Grad adds to sum a node's gradients, its constant 1)
// run on the host's placeholders, so their device values are computed when
// a device op or the program's reader first needs them (eval).
type deviceProgram struct {
	dev  cuda.Device
	rt   *Runtime
	base cuda.Ptr
	bufs []cuda.Ptr
	loc  map[*G.Node]cuda.Ptr
	// node is the node of each of the program's ops.
	node map[*kernelOp]*G.Node
	// uploads are the nodes copied to the device before each run, the
	// program's inputs (constants are copied once, when placed); params the
	// parameters, copied when their version changes.
	uploads []*G.Node
	params  []deviceParamUse
	// set are the inputs the host has set since the last run (all of them
	// before the first), the ones upload copies: an input CopyRows filled
	// on the device keeps its device value.
	set map[*G.Node]bool
	// rows holds CopyRows' row indices.
	rows cuda.Ptr
	// done are Gorgonia's nodes whose device values this run has computed.
	done map[*G.Node]bool
	mem  map[*kernelOp]*nodeMemory
}

// deviceParamUse is a parameter node of a program, by its store and name.
type deviceParamUse struct {
	store *Params
	name  string
}

// deviceParam is a parameter's buffer on a runtime's device and the version
// of its values it holds; ahead says that the host's values are older
// (Program.Adam).
type deviceParam struct {
	p             cuda.Ptr
	loaded, ahead bool
	n             uint64
}

// newDeviceProgram gives every node of p a place on the runtime's device,
// from its layout and its machine's registers regs, in the machine's order.
func newDeviceProgram(p *Program, s *Scope, order G.Nodes, regs map[*G.Node]any) (_ *deviceProgram, err error) {
	rt := p.rt
	d := &deviceProgram{dev: rt.cuda, rt: rt, loc: map[*G.Node]cuda.Ptr{}, node: map[*kernelOp]*G.Node{},
		done: map[*G.Node]bool{}, mem: map[*kernelOp]*nodeMemory{}, set: map[*G.Node]bool{}}
	defer func() {
		if err != nil {
			_ = d.close()
		}
	}()
	l := p.layout
	if l.f64 > 0 {
		return nil, errors.New("the device runs float32 graphs only")
	}
	if bytes := 4*l.f32 + 8*l.ints; bytes > 0 {
		if d.base, err = d.dev.Alloc(bytes); err != nil {
			return nil, errors.Wrap(err, "the program's arena on the device")
		}
	}
	byReg := map[any]cuda.Ptr{}
	for _, sl := range l.slots {
		off := 4 * sl.off
		if sl.dtype == tensor.Int {
			off = 4*l.f32 + 8*sl.off
		}
		for _, n := range sl.nodes {
			d.loc[n] = d.base.Add(off)
			if r, ok := regs[n]; ok {
				byReg[r] = d.loc[n]
			}
		}
	}
	params := map[*G.Node]string{}
	for name, n := range s.b.nodes {
		params[n] = name
	}
	for _, n := range order {
		if err := d.place(n, s, params, regs, byReg); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// place gives n its place on the device, unless it has one.
func (d *deviceProgram) place(n *G.Node, s *Scope, params map[*G.Node]string, regs map[*G.Node]any, byReg map[any]cuda.Ptr) error {
	op, ours := n.Op().(*kernelOp)
	switch {
	case ours && op.def.Device.Forward == nil:
		return errors.Errorf("op %s has no device kernels (Op.Device)", op.def.Name)
	case ours:
		d.node[op] = n
		d.mem[op] = &nodeMemory{}
		op.dev = d
	case n.Op() != nil && !isConstant(n) && !isSum(n):
		return errors.Errorf("node %v: Gorgonia's op %v has no device kernel", n, n.Op())
	}
	if _, ok := d.loc[n]; ok {
		return nil
	}
	r, hasReg := regs[n]
	if p, ok := byReg[r]; ok && hasReg {
		d.loc[n] = p
		return nil
	}
	if name, ok := params[n]; ok && n.Op() == nil {
		return d.param(n, s, name)
	}
	input := n.Op() == nil && s.b.inputs[n.Name()] == n
	if input {
		d.uploads = append(d.uploads, n)
		d.set[n] = true
	}
	p, err := d.alloc(4 * max(n.Shape().TotalSize(), 1))
	if err != nil {
		return err
	}
	d.loc[n] = p
	if hasReg {
		byReg[r] = p
	}
	if c, ok := n.Op().(interface{ Value() G.Value }); ok {
		return d.toDevice(n, c.Value())
	}
	if n.Op() == nil && !input {
		return d.toDevice(n, n.Value()) // the scope's constants (Scope.Constant)
	}
	return nil
}

// param places the parameter node n in the runtime's copy of it.
func (d *deviceProgram) param(n *G.Node, s *Scope, name string) error {
	buf, err := d.rt.deviceCopy(s.b.params, name)
	if err != nil {
		return err
	}
	d.loc[n] = buf.p
	d.params = append(d.params, deviceParamUse{store: s.b.params, name: name})
	return nil
}

// isConstant reports whether n is one of Gorgonia's constants (the 1 that
// gorgonia.Grad seeds the loss's gradient with).
func isConstant(n *G.Node) bool {
	_, ok := n.Op().(interface{ Value() G.Value })
	return ok
}

// isSum reports whether n is one of Gorgonia's `+` of two operands of n's
// shape (its string "+ false": not a comparison returning the same type):
// the sums gorgonia.Grad adds.
func isSum(n *G.Node) bool {
	if op := fmt.Sprint(n.Op()); op != "+" && op != "+ false" || n.Dtype() != tensor.Float32 {
		return false
	}
	in := children(n)
	return len(in) == 2 && in[0].Shape().Eq(n.Shape()) && in[1].Shape().Eq(n.Shape())
}

// children are the inputs of n, in order.
func children(n *G.Node) G.Nodes {
	var in G.Nodes
	for it := n.Graph().From(n.ID()); it.Next(); {
		in = append(in, it.Node().(*G.Node))
	}
	return in
}

// alloc is a buffer of the program's own.
func (d *deviceProgram) alloc(bytes int) (cuda.Ptr, error) {
	p, err := d.dev.Alloc(bytes)
	if err != nil {
		return 0, errors.Wrap(err, "a buffer of the program on the device")
	}
	d.bufs = append(d.bufs, p)
	return p, nil
}

// upload copies the inputs the host has set since the last run, and the
// parameters whose versions the device does not hold, to the device.
func (d *deviceProgram) upload() error {
	for _, n := range d.uploads {
		if !d.set[n] {
			continue
		}
		if err := d.toDevice(n, n.Value()); err != nil {
			return err
		}
	}
	for _, u := range d.params {
		if _, err := d.rt.deviceCopy(u.store, u.name); err != nil {
			return err
		}
	}
	clear(d.done)
	clear(d.set)
	return nil
}

// toDevice copies v, n's host value, to n's place on the device: float32
// as it is, ints as int32.
func (d *deviceProgram) toDevice(n *G.Node, v G.Value) error {
	var b []byte
	switch x := v.(type) {
	case *G.F32:
		b = cuda.Float32Bytes([]float32{float32(*x)})
	case *tensor.Dense:
		switch data := x.Data().(type) {
		case []float32:
			b = cuda.Float32Bytes(data)
		case []int:
			ids := make([]int32, len(data))
			for i, id := range data {
				ids[i] = int32(id)
			}
			b = cuda.Int32Bytes(ids)
		}
	}
	if b == nil {
		return errors.Errorf("node %v holds a %T (%v): the device takes float32 and int values", n, v, dtypeOf(v))
	}
	return errors.Wrapf(d.dev.ToDevice(d.loc[n], b), "copying %v to the device", n)
}

// dtypeOf is v's element type, for errors.
func dtypeOf(v G.Value) any {
	if v == nil {
		return nil
	}
	return v.Dtype()
}

// toHost copies n's device value into v, its host value.
func (d *deviceProgram) toHost(n *G.Node, v G.Value) error {
	if err := d.eval(n); err != nil {
		return err
	}
	switch x := v.(type) {
	case *G.F32:
		one := []float32{0}
		err := d.read(cuda.Float32Bytes(one), n)
		*x = G.F32(one[0])
		return err
	case *tensor.Dense:
		switch data := x.Data().(type) {
		case []float32:
			return d.read(cuda.Float32Bytes(data), n)
		case []int:
			if _, ours := n.Op().(*kernelOp); ours {
				words := make([]uint64, len(data))
				err := d.read(cuda.Uint64Bytes(words), n)
				for i, w := range words {
					data[i] = int(w)
				}
				return err
			}
			ids := make([]int32, len(data))
			err := d.read(cuda.Int32Bytes(ids), n)
			for i, id := range ids {
				data[i] = int(id)
			}
			return err
		}
	}
	return errors.Errorf("node %v holds a %T: cannot copy its device value to it", n, v)
}

// read copies n's device value into dst, counting the bytes
// (Runtime.CopiedToHost).
func (d *deviceProgram) read(dst []byte, n *G.Node) error {
	d.rt.copiedToHost += len(dst)
	return d.dev.ToHost(dst, d.loc[n])
}

// eval computes n's device value if n is one of Gorgonia's nodes that this
// run has not computed: its inputs first, then n.
func (d *deviceProgram) eval(n *G.Node) error {
	if !isSum(n) || d.done[n] {
		return nil
	}
	in := children(n)
	for _, c := range in {
		if err := d.eval(c); err != nil {
			return err
		}
	}
	d.done[n] = true
	err := cuda.Elems(d.dev, "add_f32", n.Shape().TotalSize(), d.loc[n], d.loc[in[0]], d.loc[in[1]], n.Shape().TotalSize())
	return errors.Wrapf(err, "node %v on the device", n)
}

// forward runs op's device Forward kernel on its node's device values, and
// returns the node's host placeholder; vals are the inputs' host values.
func (d *deviceProgram) forward(op *kernelOp, vals []G.Value) (G.Value, error) {
	n := d.node[op]
	in := children(n)
	x := make([]DeviceOperand, len(in))
	for i, c := range in {
		if err := d.eval(c); err != nil {
			return nil, err
		}
		x[i] = DeviceOperand{Shape: c.Shape(), Ptr: DevicePtr(d.loc[c]), Ints: hostInts(c, vals[i])}
	}
	y := DeviceOperand{Shape: op.shape, Ptr: DevicePtr(d.loc[n])}
	if err := op.def.Device.Forward(&DeviceCall{dev: d.dev, mem: d.mem[op], bf16: op.bf16}, y, x); err != nil {
		return nil, errors.Wrap(err, "on the device")
	}
	if op.shape.IsScalar() && !op.def.IntOutput {
		return G.NewF32(0), nil
	}
	if !fits(op.out, op.shape, op.outType) {
		op.out = tensor.New(tensor.Of(op.outType), tensor.WithShape(op.shape.Clone()...))
	}
	return op.out, nil
}

// hostInts are v's elements if it is the host value of an int input that
// the host feeds, not an op's output (which only the device holds).
func hostInts(n *G.Node, v G.Value) []int {
	if _, ours := n.Op().(*kernelOp); ours {
		return nil
	}
	if t, ok := v.(*tensor.Dense); ok {
		ints, _ := t.Data().([]int)
		return ints
	}
	return nil
}

// finish computes the device values of the nodes read after the run.
func (d *deviceProgram) finish(keep G.Nodes) error {
	for _, n := range keep {
		if err := d.eval(n); err != nil {
			return err
		}
	}
	return errors.Wrap(d.dev.Sync(), "the device")
}

// close frees the program's device memory (not the runtime's parameters).
func (d *deviceProgram) close() error {
	var first error
	note := func(err error) {
		if err != nil && first == nil {
			first = err
		}
	}
	for op, m := range d.mem {
		note(freeScratch(d.dev, m.scratch))
		note(freeScratch(d.dev, m.bf16))
		note(freeScratch(d.dev, m.layouts))
		op.dev = nil
	}
	for _, p := range slices.Concat(d.bufs, []cuda.Ptr{d.base}) {
		if p != 0 {
			note(d.dev.Free(p))
		}
	}
	d.bufs, d.base, d.mem = nil, 0, nil
	return first
}
