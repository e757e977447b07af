package graph

import (
	"fmt"
	"slices"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// deviceExec runs a program on a backend. The TapeMachine runs the program:
// each of this package's ops, when the machine calls it, launches its device
// kernels on the device values of its inputs and output (devNode) and hands
// the machine a placeholder, which holds no values. Every node's value has a
// place in device memory: the op outputs laid out in the arena plan lie at
// their offsets in one allocation of the plan's size; inputs, constants,
// scalars and the values of Gorgonia's own nodes that write no planned slot
// have buffers of their own; parameters lie in the runtime's copies. The sums
// that gorgonia.Grad adds where gradients meet run on the device (add_f32),
// just before the first of this package's ops that follows them in the
// machine's order.
//
// The first run records what the kernels launched (commands); the second
// has the backend record that as a replay (a CUDA graph), which it and every
// later run replay without running the machine, as long as the runtime keeps
// the recording (replayCache). What changes between runs reaches the device
// before the work: the inputs the host set, the parameters' new versions,
// the per-run words (DeviceCall.PerRun); the checks of CheckInts run on the
// host first.
type deviceExec struct {
	t *deviceTarget
	p *Program
	b Backend
	// base is the arena's allocation, bufs the program's other buffers.
	base DevicePtr
	bufs []DevicePtr
	// loc is every node's place; nodes the program's ops' runners, in the
	// machine's order; finish the sums after the last op.
	loc    map[*G.Node]DevicePtr
	nodes  []*devNode
	finish []sumLaunch
	inputs []*devInput
	params []paramUse
	// host are the host copies of the nodes read after a run, and the run
	// whose values each holds; runs counts the runs.
	host   map[*G.Node]G.Value
	hostAt map[*G.Node]int
	runs   int
	// words are the per-run words, next their producers, in order; checks
	// the host checks of CheckInts.
	words  []wordBlock
	next   []func() uint64
	checks []intCheck
	// rows holds CopyRows' row indices, rowsHost the host's.
	rows     DevicePtr
	rowsHost []int32
	// byPtr are the parameters by their buffers, bf16 those that products
	// read rounded to bfloat16.
	byPtr map[DevicePtr]*deviceParam
	bf16  []*deviceParam
	// recording is set during the runs until one has ended well
	// (recorded), which append the work they launch to commands; replay
	// is the backend's recording of it.
	recording, recorded bool
	commands            []command
	replay              Replay
	// call makes the program's own launches (the sums); all are the
	// gradients of every parameter, once grads has made them.
	call DeviceCall
	all  gradSet
}

// devInput is an input the host feeds: its node, host tensor and place, and
// whether the host has set it since the last run. Ints go as int32 through
// staged.
type devInput struct {
	n      *G.Node
	t      *tensor.Dense
	p      DevicePtr
	set    bool
	staged []int32
}

// paramUse is a parameter the program reads, its store's values and version.
type paramUse struct {
	b    *deviceParam
	data []float32
	ver  *version
}

// sumLaunch is one of gorgonia.Grad's sums on the device: y = a + b of n.
type sumLaunch struct {
	y, a, b DevicePtr
	n       int
}

// wordBlock is a block of per-run words in device memory.
type wordBlock struct {
	p     DevicePtr
	words []uint64
}

// wordsPerBlock is the per-run words a block holds.
const wordsPerBlock = 64

// intCheck is a host check of an int input (CheckInts), with its op's name.
type intCheck struct {
	op    string
	ints  []int
	check func([]int) error
}

// command is one piece of recorded work: a launch or a product.
type command struct {
	launch *Launch
	gemm   *DeviceGEMM
}

func (t *deviceTarget) compile(p *Program, s *Scope, order G.Nodes, regs map[*G.Node]any) (executor, error) {
	x := &deviceExec{t: t, p: p, b: t.b, loc: map[*G.Node]DevicePtr{}, host: map[*G.Node]G.Value{},
		hostAt: map[*G.Node]int{}, byPtr: map[DevicePtr]*deviceParam{}}
	x.call.x = x
	if err := x.place(s, order, regs); err != nil {
		_ = x.close()
		return nil, errors.Wrap(err, "compiling for the device")
	}
	return x, nil
}

// place gives every node of order its place on the device and every op its
// runner.
func (x *deviceExec) place(s *Scope, order G.Nodes, regs map[*G.Node]any) error {
	l := x.p.layout
	if l.f64 > 0 {
		return errors.New("the device runs float32 graphs only")
	}
	if bytes := 4*l.f32 + 8*l.ints; bytes > 0 {
		var err error
		if x.base, err = x.b.Alloc(bytes); err != nil {
			return errors.Wrap(err, "the program's arena on the device")
		}
	}
	byReg := map[any]DevicePtr{}
	for _, sl := range l.slots {
		off := 4 * sl.off
		if sl.dtype == tensor.Int {
			off = 4*l.f32 + 8*sl.off
		}
		for _, n := range sl.nodes {
			x.loc[n] = x.base.Add(off)
			if r, ok := regs[n]; ok {
				byReg[r] = x.loc[n]
			}
		}
	}
	for _, n := range order {
		if err := x.placeNode(n, s, regs, byReg); err != nil {
			return err
		}
	}
	return x.schedule(order)
}

// placeNode gives n its place on the device, unless it has one.
func (x *deviceExec) placeNode(n *G.Node, s *Scope, regs map[*G.Node]any, byReg map[any]DevicePtr) error {
	op, ours := n.Op().(*kernelOp)
	switch {
	case ours && op.def.Device.Forward == nil:
		return errors.Errorf("op %s has no device kernels (Op.Device)", op.def.Name)
	case !ours && n.Op() != nil && !isConstant(n) && !isSum(n):
		return errors.Errorf("node %v: Gorgonia's op %v has no device kernel", n, n.Op())
	}
	if _, ok := x.loc[n]; ok {
		return nil
	}
	r, hasReg := regs[n]
	if p, ok := byReg[r]; ok && hasReg {
		x.loc[n] = p
		return nil
	}
	if n.Op() == nil && s.leafKind(n) == leafParam {
		return x.param(n, s, n.Name())
	}
	p, err := x.alloc(4 * max(n.Shape().TotalSize(), 1))
	if err != nil {
		return err
	}
	x.loc[n] = p
	if hasReg {
		byReg[r] = p
	}
	switch c, ok := n.Op().(interface{ Value() G.Value }); {
	case ok:
		return x.toDevice(n, c.Value())
	case n.Op() == nil && s.leafKind(n) == leafInput:
		t, _ := n.Value().(*tensor.Dense)
		x.inputs = append(x.inputs, &devInput{n: n, t: t, p: p, set: true})
	case n.Op() == nil:
		return x.toDevice(n, n.Value()) // the scope's constants (Scope.Constant)
	}
	return nil
}

// param places the parameter node n in the runtime's copy of it.
func (x *deviceExec) param(n *G.Node, s *Scope, name string) error {
	b, err := x.t.param(s.b.params, name)
	if err != nil {
		return err
	}
	x.loc[n], x.byPtr[b.p] = b.p, b
	data, _ := s.b.params.values[name].Data().([]float32)
	x.params = append(x.params, paramUse{b: b, data: data, ver: s.b.params.versions[name]})
	return nil
}

// schedule makes the runner of every op, in the machine's order, with the
// sums that come before it, and the sums left for the end of a run.
func (x *deviceExec) schedule(order G.Nodes) error {
	var sums []sumLaunch
	for _, n := range order {
		if isSum(n) {
			in := children(n)
			sums = append(sums, sumLaunch{y: x.loc[n], a: x.loc[in[0]], b: x.loc[in[1]], n: max(n.Shape().TotalSize(), 1)})
			continue
		}
		op, ours := n.Op().(*kernelOp)
		if !ours {
			continue
		}
		dn, err := x.newNode(n, op, sums)
		if err != nil {
			return err
		}
		sums = nil
		x.nodes = append(x.nodes, dn)
		op.run = dn
	}
	x.finish = sums
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
	if n.Op() == nil || n.Dtype() != tensor.Float32 {
		return false
	}
	if op := fmt.Sprint(n.Op()); op != "+" && op != "+ false" {
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
func (x *deviceExec) alloc(bytes int) (DevicePtr, error) {
	p, err := x.b.Alloc(bytes)
	if err != nil {
		return 0, errors.Wrap(err, "a buffer of the program on the device")
	}
	x.bufs = append(x.bufs, p)
	return p, nil
}

func (x *deviceExec) activate() {}
func (x *deviceExec) release()  {}

func (x *deviceExec) set(n *G.Node) {
	for _, in := range x.inputs {
		if in.n == n {
			in.set = true
		}
	}
}

// run runs the program: its machine, recording what it launches, until a
// run has ended well; then the backend's recording of that, made at the
// next run (when the runtime keeps recordings, see Runtime.SetReplays), or
// the machine again.
func (x *deviceExec) run() error {
	x.runs++
	if err := x.prepare(); err != nil {
		return err
	}
	if x.recorded && x.t.shared.replays.limit > 0 {
		return x.replayed()
	}
	if !x.recorded {
		x.recording, x.commands, x.checks = true, x.commands[:0], x.checks[:0]
		defer func() { x.recording = false }()
	}
	defer x.p.vm.Reset()
	if err := x.p.vm.RunAll(); err != nil {
		return err
	}
	if err := x.sums(x.finish); err != nil {
		return err
	}
	x.recorded = true
	return nil
}

// replayed runs the program's recording, made now if the runtime has none.
func (x *deviceExec) replayed() error {
	if x.replay == nil {
		r, err := x.b.Record(x.reissue)
		if err != nil {
			return errors.Wrap(err, "recording the program's work (Runtime.SetReplays(0) runs programs op by op, unrecorded)")
		}
		x.replay = r
		if err := x.t.shared.replays.add(x); err != nil {
			return err
		}
	} else {
		x.t.shared.replays.touch(x)
	}
	return x.replay.Run()
}

// reissue makes the recorded work again.
func (x *deviceExec) reissue() error {
	for _, c := range x.commands {
		var err error
		if c.launch != nil {
			err = x.b.Launch(c.launch)
		} else {
			err = x.b.Gemm(c.gemm)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// dropReplay frees the program's recording (its commands stay, to be
// recorded again).
func (x *deviceExec) dropReplay() error {
	if x.replay == nil {
		return nil
	}
	err := x.replay.Close()
	x.replay = nil
	return err
}

// prepare brings to the device what the host changed since the last run:
// the inputs set, the parameters' new versions and their bfloat16 copies,
// and the run's per-run words known so far; once a run has been recorded,
// it runs the host checks first.
func (x *deviceExec) prepare() error {
	for _, in := range x.inputs {
		if in.set {
			if err := x.upload(in); err != nil {
				return err
			}
			in.set = false
		}
	}
	for _, u := range x.params {
		if err := x.t.upload(u.b, u.data, u.ver); err != nil {
			return err
		}
	}
	if err := x.t.refreshBF16(x.bf16); err != nil {
		return err
	}
	if x.recorded {
		for _, c := range x.checks {
			if err := c.check(c.ints); err != nil {
				return errors.Wrapf(err, "%s: on the device", c.op)
			}
		}
	}
	return x.uploadWords()
}

// upload copies an input's host values to the device: float32 as they
// are, ints as int32.
func (x *deviceExec) upload(in *devInput) error {
	var b []byte
	switch data := in.t.Data().(type) {
	case []float32:
		b = asBytes(data)
	case []int:
		if len(in.staged) != len(data) {
			in.staged = make([]int32, len(data))
		}
		for i, id := range data {
			in.staged[i] = int32(id)
		}
		b = asBytes(in.staged)
	default:
		return errors.Errorf("input %v holds %v: the device takes float32 and int inputs", in.n, in.t.Dtype())
	}
	return errors.Wrapf(x.b.ToDevice(in.p, b), "copying %v to the device", in.n)
}

// toDevice copies v, n's host value (a constant), to n's place.
func (x *deviceExec) toDevice(n *G.Node, v G.Value) error {
	var b []byte
	switch c := v.(type) {
	case *G.F32:
		b = asBytes([]float32{float32(*c)})
	case *tensor.Dense:
		if data, ok := c.Data().([]float32); ok {
			b = asBytes(data)
		}
	}
	if b == nil {
		return errors.Errorf("node %v holds a %T (%v): the device takes float32 constants", n, v, dtypeOf(v))
	}
	return errors.Wrapf(x.b.ToDevice(x.loc[n], b), "copying %v to the device", n)
}

// dtypeOf is v's element type, for errors.
func dtypeOf(v G.Value) any {
	if v == nil {
		return nil
	}
	return v.Dtype()
}

// addPerRun gives a new per-run word the value next() and a place, and
// copies it to the device: as its node first runs.
func (x *deviceExec) addPerRun(next func() uint64) (DevicePtr, error) {
	k := len(x.next)
	if k%wordsPerBlock == 0 {
		p, err := x.alloc(8 * wordsPerBlock)
		if err != nil {
			return 0, err
		}
		x.words = append(x.words, wordBlock{p: p})
	}
	w := &x.words[len(x.words)-1]
	w.words = append(w.words, next())
	x.next = append(x.next, next)
	p := w.p.Add(8 * (k % wordsPerBlock))
	return p, errors.Wrap(x.b.ToDevice(p, asBytes(w.words[k%wordsPerBlock:])), "a per-run word to the device")
}

// uploadWords computes the run's per-run words, in order, and copies them
// to the device.
func (x *deviceExec) uploadWords() error {
	for k, next := range x.next {
		x.words[k/wordsPerBlock].words[k%wordsPerBlock] = next()
	}
	for _, w := range x.words {
		if err := x.b.ToDevice(w.p, asBytes(w.words)); err != nil {
			return errors.Wrap(err, "the per-run words to the device")
		}
	}
	return nil
}

// checkInts runs check on ints and keeps it for later runs while the
// program is recorded; later runs check before their work (prepare).
func (x *deviceExec) checkInts(op string, ints []int, check func([]int) error) error {
	if !x.recording {
		return nil
	}
	x.checks = append(x.checks, intCheck{op: op, ints: ints, check: check})
	return check(ints)
}

// launch launches l, recording it while the program is recorded.
func (x *deviceExec) launch(l *Launch) error {
	if x.recording {
		c := *l
		x.commands = append(x.commands, command{launch: &c})
	}
	return x.b.Launch(l)
}

// product runs g, recording it while the program is recorded.
func (x *deviceExec) product(g *DeviceGEMM) error {
	if x.recording {
		c := *g
		x.commands = append(x.commands, command{gemm: &c})
	}
	return x.b.Gemm(g)
}

// sums launches gorgonia.Grad's sums ss.
func (x *deviceExec) sums(ss []sumLaunch) error {
	for _, s := range ss {
		if err := x.call.Launch(addF32.Elems(s.n).Ptr(s.y).Ptr(s.a).Ptr(s.b).Int(s.n)); err != nil {
			return errors.Wrap(err, "a sum of gradients on the device")
		}
	}
	return nil
}

// paramBF16 is the bfloat16 copy of the parameter whose buffer p is, if it
// is one (its first n elements), made now if the program has not read it
// so before.
func (x *deviceExec) paramBF16(p DevicePtr, n int) (DevicePtr, bool, error) {
	b, ok := x.byPtr[p]
	if !ok || n > b.n {
		return 0, false, nil
	}
	if !slices.Contains(x.bf16, b) {
		if err := x.t.refreshBF16([]*deviceParam{b}); err != nil {
			return 0, false, err
		}
		x.bf16 = append(x.bf16, b)
	}
	return b.bf16, true, nil
}

// value is a host copy of n's device value, read into a tensor of the
// program's own for n (v, the machine's placeholder, gives its type) once
// per run: the reads after the first of a run read that copy.
func (x *deviceExec) value(n *G.Node, v G.Value) G.Value {
	if v == nil {
		return nil
	}
	h, ok := x.host[n]
	if ok && x.hostAt[n] == x.runs {
		return h
	}
	if !ok {
		switch v.(type) {
		case *G.F32:
			h = G.NewF32(0)
		case *tensor.Dense:
			dt := n.Dtype()
			h = tensor.New(tensor.Of(dt), tensor.WithShape(n.Shape().Clone()...))
		default:
			return nil
		}
		x.host[n] = h
	}
	if err := x.toHost(n, h); err != nil {
		delete(x.hostAt, n)
		return nil
	}
	x.hostAt[n] = x.runs
	return h
}

// toHost copies n's device value into h.
func (x *deviceExec) toHost(n *G.Node, h G.Value) error {
	switch v := h.(type) {
	case *G.F32:
		one := []float32{0}
		err := x.read(asBytes(one), n)
		*v = G.F32(one[0])
		return err
	case *tensor.Dense:
		switch data := v.Data().(type) {
		case []float32:
			return x.read(asBytes(data), n)
		case []int:
			return x.readInts(data, n)
		}
	}
	return errors.Errorf("node %v holds a %T: cannot copy its device value to it", n, h)
}

// readInts reads n's int value: 64-bit words for an op's output, int32
// for an input the host feeds.
func (x *deviceExec) readInts(data []int, n *G.Node) error {
	if _, ours := n.Op().(*kernelOp); ours {
		words := make([]uint64, len(data))
		err := x.read(asBytes(words), n)
		for i, w := range words {
			data[i] = int(w)
		}
		return err
	}
	ids := make([]int32, len(data))
	err := x.read(asBytes(ids), n)
	for i, id := range ids {
		data[i] = int(id)
	}
	return err
}

// read copies n's device value into dst, counting the bytes.
func (x *deviceExec) read(dst []byte, n *G.Node) error {
	x.t.copied += len(dst)
	return x.b.ToHost(dst, x.loc[n])
}

// grads are the device addresses of the gradients of every parameter,
// which stay where they are: made on the first call (dev non-nil then, even
// for no parameters) and kept.
func (x *deviceExec) grads() (gradSet, error) {
	if x.all.dev != nil {
		return x.all, nil
	}
	names := x.p.params
	g := gradSet{names: names, dev: make([]DevicePtr, len(names)), sizes: make([]int, len(names))}
	for i := range names {
		n := x.p.grads[i]
		g.dev[i], g.sizes[i] = x.loc[n], n.Shape().TotalSize()
	}
	x.all = g
	return x.all, nil
}

// close frees the program's device memory (not the runtime's parameters).
func (x *deviceExec) close() error {
	var first error
	note := func(err error) {
		if err != nil && first == nil {
			first = err
		}
	}
	x.t.shared.replays.remove(x)
	note(x.dropReplay())
	for _, dn := range x.nodes {
		m := &dn.call.mem
		for _, bufs := range [][]deviceBuf{m.scratch, m.bf16, m.layouts, m.tables} {
			note(x.t.free(bufs))
		}
		dn.op.run = hostRunner{}
	}
	for _, p := range slices.Concat(x.bufs, []DevicePtr{x.base}) {
		if p != 0 {
			note(x.b.Free(p))
		}
	}
	x.bufs, x.base, x.nodes = nil, 0, nil
	return first
}
