package graph

import (
	"slices"

	"github.com/pkg/errors"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph/internal/cuda"
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
	// program input such as token ids or targets), nil otherwise, so that a
	// kernel checks them before it launches, as the CPU's kernels do.
	Ints []int
}

// DeviceKernels are an op's computations on a device (DeviceCUDA), in
// float32: the same computations as its Kernels, as launches of the kernels
// of graph/internal/cuda/kernels/*.cu by name and matrix products. An op
// without a device Forward (or, when its gradient comes from Backward
// kernels, a device Backward) cannot be compiled on a device runtime.
type DeviceKernels struct {
	// Forward writes the output y from the inputs x.
	Forward func(d *DeviceCall, y DeviceOperand, x []DeviceOperand) error
	// Backward writes into dx the gradient of input i, given the inputs x
	// (addresses only for those saved: Op.Save), the output y (if saved)
	// and the output's gradient dy.
	Backward func(d *DeviceCall, i int, dx DeviceOperand, x []DeviceOperand, y, dy DeviceOperand) error
}

// DeviceCall is what a device kernel runs with: the device's launches and
// matrix products, in the order they are made, and memory of its node's own
// that lasts from run to run (Scratch). Small int tables that a kernel reads
// from device memory (a broadcast's or a permutation's layout) go through
// Layout, which copies them to the device once, not at every launch; data
// that changes from run to run (a dropout mask, an input's ids) does not.
type DeviceCall struct {
	dev cuda.Device
	mem *nodeMemory
	// bf16 says the node's program has BF16 products (see Gemm).
	bf16 bool
}

// nodeMemory is a node's memory on the device: the scratch buffers its
// kernels ask for, the bfloat16 copies of its products' operands, and its
// layouts with the host's copy of what each holds.
type nodeMemory struct {
	scratch, bf16, layouts []scratchBuf
	held                   [][]int32
}

// scratchBuf is one buffer of a node's scratch memory.
type scratchBuf struct {
	p     cuda.Ptr
	bytes int
}

// Elems launches an elementwise kernel, one whose loop runs over n elements
// (for_each_elem), with blocks of 256 threads. The arguments are checked
// against the kernel's parameters in its source: DevicePtr for a pointer,
// int or int32 for int, float32 for float, uint64 for unsigned long long.
func (d *DeviceCall) Elems(kernel string, n int, args ...any) error {
	return cuda.Elems(d.dev, kernel, n, deviceArgs(args)...)
}

// Rows launches a row kernel (for_each_row: a block per row, reducing over
// its cols) with one block per row, of the least power of two threads from
// 32 to 256 that covers a row.
func (d *DeviceCall) Rows(kernel string, rows, cols int, args ...any) error {
	return cuda.Rows(d.dev, kernel, rows, cols, deviceArgs(args)...)
}

// DeviceGEMM is Batch row-major products C = Alpha·op(A)·op(B) + Beta·C
// with op(A) [M, K], op(B) [K, N], C [M, N], all float32; op transposes
// when Trans is set. LDA, LDB and LDC are the row strides, and StrideA,
// StrideB, StrideC the distances between a batch's matrices, in elements
// (StrideA or StrideB 0: one matrix for the whole batch). C is not read when
// Beta is 0.
type DeviceGEMM struct {
	TransA, TransB            bool
	M, N, K                   int
	Alpha, Beta               float32
	A, B, C                   DevicePtr
	LDA, LDB, LDC             int
	Batch                     int
	StrideA, StrideB, StrideC int
}

// Gemm runs the products g (cuBLAS on a GPU). In a program with BF16
// products (Precision), products large enough for bfloat16 to pay on the
// CPU (as the CPU's kernels decide, by M, N and K) round A and B to
// bfloat16 (to_bf16, into memory of the node's) and sum in float32, as the
// CPU's do; the others are float32.
func (d *DeviceCall) Gemm(g DeviceGEMM) error {
	c := cuda.GEMM{
		TransA: g.TransA, TransB: g.TransB, M: g.M, N: g.N, K: g.K, Alpha: g.Alpha, Beta: g.Beta,
		A: cuda.Ptr(g.A), B: cuda.Ptr(g.B), C: cuda.Ptr(g.C), LDA: g.LDA, LDB: g.LDB, LDC: g.LDC,
		Batch: max(g.Batch, 1), StrideA: g.StrideA, StrideB: g.StrideB, StrideC: g.StrideC,
	}
	if d.bf16 && blas.BF16Pays(g.M, g.N, g.K) {
		rows, cols := c.M, c.K
		if c.TransA {
			rows, cols = cols, rows
		}
		a, err := d.roundBF16(0, c.A, (c.Batch-1)*c.StrideA+(rows-1)*c.LDA+cols)
		if err != nil {
			return err
		}
		rows, cols = c.K, c.N
		if c.TransB {
			rows, cols = cols, rows
		}
		b, err := d.roundBF16(1, c.B, (c.Batch-1)*c.StrideB+(rows-1)*c.LDB+cols)
		if err != nil {
			return err
		}
		c.A, c.B, c.BF16 = a, b, true
	}
	return d.dev.Gemm(c)
}

// roundBF16 is x's n elements rounded to bfloat16, in the node's bfloat16
// buffer i.
func (d *DeviceCall) roundBF16(i int, x cuda.Ptr, n int) (cuda.Ptr, error) {
	p, err := grow(d.dev, &d.mem.bf16, i, 2*n)
	if err != nil {
		return 0, err
	}
	return p, cuda.Elems(d.dev, "to_bf16", n, p, x, n)
}

// Scratch is buffer i of the node's scratch memory, of at least bytes: the
// same memory at every run of the node's program, not shared with any other
// node, and not initialized.
func (d *DeviceCall) Scratch(i, bytes int) (DevicePtr, error) {
	p, err := grow(d.dev, &d.mem.scratch, i, bytes)
	return DevicePtr(p), err
}

// grow is buffer i of *bufs, made at least bytes large.
func grow(dev cuda.Device, bufs *[]scratchBuf, i, bytes int) (cuda.Ptr, error) {
	for len(*bufs) <= i {
		*bufs = append(*bufs, scratchBuf{})
	}
	if b := &(*bufs)[i]; b.bytes < bytes {
		if b.p != 0 {
			if err := dev.Free(b.p); err != nil {
				return 0, err
			}
			b.p, b.bytes = 0, 0
		}
		p, err := dev.Alloc(bytes)
		if err != nil {
			return 0, errors.Wrap(err, "scratch memory on the device")
		}
		b.p, b.bytes = p, bytes
	}
	return (*bufs)[i].p, nil
}

// Layout is the node's layout buffer i (apart from its Scratch) holding v:
// the shapes and strides that some kernels read from device memory
// (BroadcastLayout's, say). It copies v to the device only when v differs
// from the host's copy of what the buffer holds, so a node's launches after
// its first copy nothing. Data that changes from run to run (a dropout
// mask, DeviceOperand.Ints) would be compared and copied at every launch:
// a kernel copies it itself.
func (d *DeviceCall) Layout(i int, v []int32) (DevicePtr, error) {
	p, err := grow(d.dev, &d.mem.layouts, i, 4*max(len(v), 1))
	if err != nil {
		return 0, err
	}
	for len(d.mem.held) <= i {
		d.mem.held = append(d.mem.held, nil)
	}
	if slices.Equal(d.mem.held[i], v) {
		return DevicePtr(p), nil
	}
	d.mem.held[i] = nil
	if err := d.dev.ToDevice(p, cuda.Int32Bytes(v)); err != nil {
		return 0, errors.Wrap(err, "a layout to the device")
	}
	d.mem.held[i] = slices.Clone(v)
	return DevicePtr(p), nil
}

// deviceArgs turns DevicePtr arguments into the device layer's pointers.
func deviceArgs(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		if p, ok := a.(DevicePtr); ok {
			a = cuda.Ptr(p)
		}
		out[i] = a
	}
	return out
}

// freeScratch releases the scratch buffers bufs on dev (a node's, or the
// runtime's).
func freeScratch(dev cuda.Device, bufs []scratchBuf) error {
	var first error
	for _, b := range bufs {
		if b.p != 0 {
			if err := dev.Free(b.p); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}
