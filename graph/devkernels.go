package graph

import (
	"slices"
	"unsafe"

	"github.com/pkg/errors"
	"gorgonia.org/tensor"

	blas "github.com/transformer-go/transformer/graph/internal/gemm"
)

// DevicePtr is an address in a device's memory, as a device kernel passes
// it to a launch; 0 is the null pointer, which a kernel may take where it
// documents an optional input.
type DevicePtr uint64

// Add is p moved on by bytes.
func (p DevicePtr) Add(bytes int) DevicePtr { return p + DevicePtr(bytes) }

// DeviceOperand is what a device kernel sees of one input or output: its
// shape and where its elements lie, float32 for a float tensor; an int
// tensor holds int32 when it is an input of the graph (token ids, targets)
// and 64-bit words when an op wrote it (Op.IntOutput: dropout's masks). A
// scalar has shape () and one element.
type DeviceOperand struct {
	Shape tensor.Shape
	Ptr   DevicePtr
	// Ints are the host's elements of an int input that the host feeds (a
	// program input such as token ids or targets), nil otherwise, for
	// DeviceCall.CheckInts.
	Ints []int
}

// Len is the number of elements of o: 1 for a scalar.
func (o DeviceOperand) Len() int { return max(o.Shape.TotalSize(), 1) }

// DeviceKernels are an op's computations on a device backend (Backend), in
// float32: the same computations as its Kernels, as launches of the kernels
// of a DeviceModule and matrix products. An op without a device Forward (or,
// when its gradient comes from Backward kernels, a device Backward) cannot be
// compiled on a device runtime.
//
// A program on a device runs its tape once, and replays what its kernels
// launched at later runs: so the kernels launch the same work at every run
// of a program, and what changes from run to run reaches them through
// device memory (inputs, PerRun) and is checked on the host by CheckInts.
type DeviceKernels struct {
	// Forward writes the output y from the inputs x.
	Forward func(d *DeviceCall, y DeviceOperand, x []DeviceOperand) error
	// Backward writes into dx the gradient of input i, given the inputs x
	// (addresses only for those saved: Op.Save), the output y (if saved)
	// and the output's gradient dy.
	Backward func(d *DeviceCall, i int, dx DeviceOperand, x []DeviceOperand, y, dy DeviceOperand) error
}

// DeviceCall is what a node's device kernels run with: the device's
// launches and matrix products, in the order they are made, and memory of
// the node's own that lasts from run to run (Scratch, Layout, PerRun).
type DeviceCall struct {
	x *deviceExec
	// name is the node's op's, for errors.
	name string
	// gemms counts the two-level products the node has made in this run.
	gemms int
	// bf16 says the node's program has BF16 products (see Gemm).
	bf16 bool
	mem  nodeMemory
	// launch and gemm hold the call being made, so that handing it to the
	// backend allocates nothing.
	launch Launch
	gemm   DeviceGEMM
}

// nodeMemory is a node's memory on the device: the scratch buffers its
// kernels ask for, the bfloat16 copies of its products' operands, its
// layouts with the host's copy of what each holds, the address tables of
// its two-level products with the product each was made for, and its
// per-run words.
type nodeMemory struct {
	scratch, bf16, layouts, tables []deviceBuf
	held                           [][]int32
	tabled                         []DeviceGEMM
	perRun                         []DevicePtr
}

// deviceBuf is one buffer of a node's (or a runtime's) device memory.
type deviceBuf struct {
	p     DevicePtr
	bytes int
}

// Launch launches l (built by a DeviceKernel's Elems, Rows or Grid), after
// the work launched before it.
func (d *DeviceCall) Launch(l Launch) error {
	d.launch = l
	return d.x.launch(&d.launch)
}

// DeviceGEMM is Batch·Outer row-major products C = Alpha·op(A)·op(B) +
// Beta·C with op(A) [M, K], op(B) [K, N], C [M, N], all float32; op
// transposes when Trans is set. LDA, LDB and LDC are the row strides, in
// elements. Product (o, e), for o < Outer and e < Batch, reads and writes
// the matrices at o·OuterX + e·StrideX elements from X (StrideA, StrideB or
// OuterA, OuterB 0: the same matrix for all): the heads of every batch
// entry of attention, say, whose matrices lie at one stride for the heads
// and another for the entries. C's products must not overlap. C is not
// read when Beta is 0.
type DeviceGEMM struct {
	TransA, TransB            bool
	M, N, K                   int
	Alpha, Beta               float32
	A, B, C                   DevicePtr
	LDA, LDB, LDC             int
	Batch                     int
	StrideA, StrideB, StrideC int
	Outer                     int
	OuterA, OuterB, OuterC    int
	// BF16 says that A and B hold bfloat16, and the sums are float32; the
	// runtime sets it (see DeviceCall.Gemm).
	BF16 bool
	// Table, for Outer above 1, is the device address of the products'
	// matrices: Batch·Outer addresses of A, then of B, then of C, product
	// (o, e) at o·Batch + e; the runtime makes it (see DeviceCall.Gemm), and
	// a backend may use it or the strides.
	Table DevicePtr
}

// Gemm runs the products g (cuBLAS on a GPU). Products of two levels (Outer
// above 1) run as one batched product from a table of their addresses, made
// once for the node. In a program with BF16 products (Precision), products
// large enough for bfloat16 to pay on the CPU (as the CPU's kernels decide,
// by M, N and K) read A and B rounded to bfloat16 (the runtime's bfloat16
// copies of parameters, made once for each of their versions; others
// rounded here, into memory of the node's) and sum in float32, as the CPU's
// do; the others are float32.
func (d *DeviceCall) Gemm(g DeviceGEMM) error {
	g.Batch, g.Outer = max(g.Batch, 1), max(g.Outer, 1)
	g.BF16, g.Table = false, 0
	if d.bf16 && blas.BF16Pays(g.M, g.N, g.K) {
		if err := d.roundOperands(&g); err != nil {
			return err
		}
	}
	if g.Outer > 1 {
		table, err := d.table(g)
		if err != nil {
			return err
		}
		g.Table = table
	}
	d.gemm = g
	return d.x.product(&d.gemm)
}

// roundOperands points g's A and B at bfloat16 copies of them.
func (d *DeviceCall) roundOperands(g *DeviceGEMM) error {
	sa, sb, _ := g.Spans()
	a, err := d.bf16Of(0, g.A, sa)
	if err != nil {
		return err
	}
	b, err := d.bf16Of(1, g.B, sb)
	if err != nil {
		return err
	}
	g.A, g.B, g.BF16 = a, b, true
	return nil
}

// span is the elements from the first to the last element of an operand of
// the products g, of rows × cols matrices of row stride ld at the strides
// outer and stride.
func (g *DeviceGEMM) span(outer, stride, rows, ld, cols int) int {
	return (max(g.Outer, 1)-1)*outer + (max(g.Batch, 1)-1)*stride + (rows-1)*ld + cols
}

// Spans are the elements that A, B and C reach, from their first element.
func (g *DeviceGEMM) Spans() (a, b, c int) {
	ra, ca := g.M, g.K
	if g.TransA {
		ra, ca = ca, ra
	}
	rb, cb := g.K, g.N
	if g.TransB {
		rb, cb = cb, rb
	}
	return g.span(g.OuterA, g.StrideA, ra, g.LDA, ca), g.span(g.OuterB, g.StrideB, rb, g.LDB, cb), g.span(g.OuterC, g.StrideC, g.M, g.LDC, g.N)
}

// bf16Of is the bfloat16 copy of the n elements at x: the runtime's copy of
// a parameter, or else x rounded (to_bf16) into the node's bfloat16 buffer i.
func (d *DeviceCall) bf16Of(i int, x DevicePtr, n int) (DevicePtr, error) {
	if p, ok, err := d.x.paramBF16(x, n); ok || err != nil {
		return p, err
	}
	p, err := d.x.t.grow(&d.mem.bf16, i, 2*n)
	if err != nil {
		return 0, err
	}
	return p, d.Launch(toBF16.Elems(n).Ptr(p).Ptr(x).Int(n))
}

// table is the address table of the two-level products g, in the node's
// table buffer for its k-th such product, made and copied to the device
// when its addresses differ from the last ones made there.
func (d *DeviceCall) table(g DeviceGEMM) (DevicePtr, error) {
	k := d.gemms
	d.gemms++
	count := g.Batch * g.Outer
	p, err := d.x.t.grow(&d.mem.tables, k, 3*8*count)
	if err != nil {
		return 0, err
	}
	for len(d.mem.tabled) <= k {
		d.mem.tabled = append(d.mem.tabled, DeviceGEMM{})
	}
	key := g
	key.Alpha, key.Beta = 0, 0
	if d.mem.tabled[k] == key {
		return p, nil
	}
	words := make([]uint64, 3*count)
	size := uint64(4)
	if g.BF16 {
		size = 2
	}
	for o := range g.Outer {
		for e := range g.Batch {
			i := o*g.Batch + e
			words[i] = uint64(g.A) + size*uint64(o*g.OuterA+e*g.StrideA)
			words[count+i] = uint64(g.B) + size*uint64(o*g.OuterB+e*g.StrideB)
			words[2*count+i] = uint64(g.C) + 4*uint64(o*g.OuterC+e*g.StrideC)
		}
	}
	if err := d.x.b.ToDevice(p, asBytes(words)); err != nil {
		return 0, errors.Wrap(err, "a product's address table to the device")
	}
	d.mem.tabled[k] = key
	return p, nil
}

// Scratch is buffer i of the node's scratch memory, of at least bytes: the
// same memory at every run of the node's program, not shared with any other
// node, and not initialized.
func (d *DeviceCall) Scratch(i, bytes int) (DevicePtr, error) {
	return d.x.t.grow(&d.mem.scratch, i, bytes)
}

// Layout is the node's layout buffer i (apart from its Scratch) holding v:
// the shapes and strides that some kernels read from device memory
// (a broadcast's layout, say). It copies v to the device only when v
// differs from what the buffer holds, so a node's launches after its first
// copy nothing.
func (d *DeviceCall) Layout(i int, v []int32) (DevicePtr, error) {
	p, err := d.x.t.grow(&d.mem.layouts, i, 4*max(len(v), 1))
	if err != nil {
		return 0, err
	}
	for len(d.mem.held) <= i {
		d.mem.held = append(d.mem.held, nil)
	}
	if slices.Equal(d.mem.held[i], v) {
		return p, nil
	}
	d.mem.held[i] = nil
	if err := d.x.b.ToDevice(p, asBytes(v)); err != nil {
		return 0, errors.Wrap(err, "a layout to the device")
	}
	d.mem.held[i] = slices.Clone(v)
	return p, nil
}

// PerRun is the device address of the node's per-run word i: a 64-bit
// value that next() computes on the host at every run of the program,
// before its kernels run, in the order of the nodes' first calls (a dropout
// mask's seed, drawn from the run's generator). Kernels read it from device
// memory, so a replayed run reads each run's value.
func (d *DeviceCall) PerRun(i int, next func() uint64) (DevicePtr, error) {
	for len(d.mem.perRun) <= i {
		d.mem.perRun = append(d.mem.perRun, 0)
	}
	if d.mem.perRun[i] == 0 {
		p, err := d.x.addPerRun(next)
		if err != nil {
			return 0, err
		}
		d.mem.perRun[i] = p
	}
	return d.mem.perRun[i], nil
}

// CheckInts checks the host's elements of x, an int input the host feeds,
// with check (ids within a vocabulary, say) before the node's kernels
// launch, at this run and at every later run of the program, its replays
// too. It does nothing for an operand whose elements only the device holds.
func (d *DeviceCall) CheckInts(x DeviceOperand, check func([]int) error) error {
	if x.Ints == nil {
		return nil
	}
	return d.x.checkInts(d.name, x.Ints, check)
}

// asBytes is x's memory as bytes.
func asBytes[T uint64 | int32 | float32](x []T) []byte {
	if len(x) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&x[0])), int(unsafe.Sizeof(x[0]))*len(x))
}

// Check says what is wrong with g, if anything: sizes and batch counts in
// [1, 2^31), row strides that hold a row, strides that are not negative,
// and products whose matrices of C do not overlap (whole rows apart, or
// side by side within a row).
func (g *DeviceGEMM) Check() error {
	ca, cb := g.K, g.N
	if g.TransA {
		ca = g.M
	}
	if g.TransB {
		cb = g.K
	}
	const lim = 1<<31 - 1
	switch {
	case g.M < 1 || g.N < 1 || g.K < 1 || g.M > lim || g.N > lim || g.K > lim:
		return errors.Errorf("gemm: sizes M=%d N=%d K=%d must be in [1, 2^31)", g.M, g.N, g.K)
	case g.LDA < ca || g.LDB < cb || g.LDC < g.N || g.LDA > lim || g.LDB > lim || g.LDC > lim:
		return errors.Errorf("gemm: row strides LDA=%d LDB=%d LDC=%d, need at least %d, %d, %d", g.LDA, g.LDB, g.LDC, ca, cb, g.N)
	case g.Batch < 1 || g.Batch > lim || g.Outer < 0 || g.Outer > lim || g.Batch*max(g.Outer, 1) > lim:
		return errors.Errorf("gemm: batch %d by %d must be in [1, 2^31)", g.Batch, g.Outer)
	case g.StrideA < 0 || g.StrideB < 0 || g.StrideC < 0 || g.OuterA < 0 || g.OuterB < 0 || g.OuterC < 0:
		return errors.Errorf("gemm: negative strides %d, %d, %d and %d, %d, %d", g.StrideA, g.StrideB, g.StrideC, g.OuterA, g.OuterB, g.OuterC)
	}
	rows, cols, ok := disjoint(g.Batch, g.StrideC, g.M, g.N, g.LDC)
	if ok {
		_, _, ok = disjoint(max(g.Outer, 1), g.OuterC, rows, cols, g.LDC)
	}
	if !ok {
		return errors.Errorf("gemm: batch strides %d (outer %d) of C [%d, %d] with row stride %d: the products would overlap (want C's at least %d apart, or side by side within a row)",
			g.StrideC, g.OuterC, g.M, g.N, g.LDC, g.M*g.LDC)
	}
	return nil
}

// disjoint reports whether count matrices of rows × cols, row stride ld,
// stride apart, do not overlap: whole rows apart, or side by side within a
// row; and the rows and columns of the block they make.
func disjoint(count, stride, rows, cols, ld int) (r, c int, ok bool) {
	switch {
	case count == 1:
		return rows, cols, true
	case stride >= rows*ld:
		return ((count-1)*stride+ld-1)/ld + rows, cols, true
	case stride >= cols && (count-1)*stride+cols <= ld:
		return rows, (count-1)*stride + cols, true
	}
	return 0, 0, false
}
