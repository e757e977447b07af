package graph

import (
	"math"

	"github.com/pkg/errors"
)

// Dim3 is a launch's grid or block size; a zero component counts as 1.
type Dim3 struct{ X, Y, Z int }

// MaxLaunchArgs is the most arguments a kernel launch passes, and so the
// most parameters a kernel of a device module may take
// (RegisterDeviceModule refuses more): a backend's buffer of a launch's
// arguments holds this many.
const MaxLaunchArgs = 24

// The launch shapes the kernels of common.cuh's loops are written for.
const (
	elemBlock = 256     // threads per block of an elementwise kernel
	maxGrid   = 1 << 16 // blocks at most; the kernels' loops stride the grid
	maxBlock  = 1024    // threads per block at most (MAX_BLOCK)
)

// Launch is one launch of a device kernel: the kernel, its grid and block,
// and its arguments, packed in order by Ptr, Int, F32 and U64, each in an
// 8-byte slot as cuLaunchKernel takes them. It is a value, built without
// allocating:
//
//	d.Launch(addF32.Elems(n).Ptr(y.Ptr).Ptr(a.Ptr).Ptr(b.Ptr).Int(n))
//
// and checked against the kernel's parameters when it is launched.
type Launch struct {
	Kernel      *DeviceKernel
	Grid, Block Dim3
	n           int
	kinds       [MaxLaunchArgs]ParamKind
	// slots hold the arguments, an Int whole (a C int reads the slot's low
	// 32 bits, little-endian), so that Check sees whether it fits.
	slots [MaxLaunchArgs]uint64
}

// Elems is a launch of k over n elements (a kernel whose loop is
// for_each_elem): blocks of 256 threads, one element each, up to 65536
// blocks (the loop strides the grid beyond).
func (k *DeviceKernel) Elems(n int) Launch {
	return Launch{Kernel: k, Grid: Dim3{X: min(max((n+elemBlock-1)/elemBlock, 1), maxGrid)}, Block: Dim3{X: elemBlock}}
}

// Rows is a launch of k over rows of cols (a row kernel: for_each_row, a
// block per row reducing over its columns): one block per row up to 65536,
// of the least power of two threads from 32 to 256 that covers a row.
func (k *DeviceKernel) Rows(rows, cols int) Launch {
	block := 32
	for block < cols && block < elemBlock {
		block *= 2
	}
	return Launch{Kernel: k, Grid: Dim3{X: min(max(rows, 1), maxGrid)}, Block: Dim3{X: block}}
}

// Grid is a launch of k on grid blocks of block threads.
func (k *DeviceKernel) Grid(grid, block Dim3) Launch {
	return Launch{Kernel: k, Grid: grid, Block: block}
}

// Ptr appends a pointer argument.
func (l Launch) Ptr(p DevicePtr) Launch { return l.add(ParamPtr, uint64(p)) }

// Int appends a C int argument; it must fit 32 bits.
func (l Launch) Int(v int) Launch { return l.add(ParamInt, uint64(v)) }

// F32 appends a C float argument.
func (l Launch) F32(v float32) Launch { return l.add(ParamFloat, uint64(math.Float32bits(v))) }

// U64 appends an unsigned long long argument.
func (l Launch) U64(v uint64) Launch { return l.add(ParamU64, v) }

// add appends an argument of kind k in slot s; arguments past MaxLaunchArgs are
// counted, and refused by Check.
func (l Launch) add(k ParamKind, s uint64) Launch {
	if l.n < MaxLaunchArgs {
		l.kinds[l.n], l.slots[l.n] = k, s
	}
	l.n++
	return l
}

// Args are the launch's argument slots, in order.
func (l *Launch) Args() []uint64 { return l.slots[:min(l.n, MaxLaunchArgs)] }

// Pointer reports whether argument i is a pointer.
func (l *Launch) Pointer(i int) bool { return l.kinds[i] == ParamPtr }

// Check says what is wrong with the launch, if anything: a kernel, a grid
// and block within CUDA's limits (a block of a power of two threads up to
// 1024), and arguments of the kernel's number and kinds, ints that fit 32
// bits. Backends check it, then that its pointers are null or in memory of
// theirs.
func (l *Launch) Check() error {
	if l.Kernel == nil {
		return errors.New("a launch of no kernel")
	}
	if err := l.checkDims(); err != nil {
		return errors.Wrapf(err, "kernel %s", l.Kernel)
	}
	params := l.Kernel.params
	if l.n != len(params) {
		return errors.Errorf("kernel %s takes %d arguments, have %d", l.Kernel, len(params), l.n)
	}
	for i, p := range params {
		switch {
		case l.kinds[i] != p.Kind:
			return errors.Errorf("kernel %s, argument %d (%s): have %s, want %s", l.Kernel, i+1, p.Name, l.kinds[i], p.Kind)
		case p.Kind == ParamInt && int64(l.slots[i]) != int64(int32(l.slots[i])):
			return errors.Errorf("kernel %s, argument %d (%s): %d does not fit a C int", l.Kernel, i+1, p.Name, int64(l.slots[i]))
		}
	}
	return nil
}

// checkDims checks the grid and block against CUDA's limits.
func (l *Launch) checkDims() error {
	g, b := l.Grid, l.Block
	for _, d := range []struct {
		what string
		v    Dim3
	}{{"grid", g}, {"block", b}} {
		if d.v.X < 0 || d.v.Y < 0 || d.v.Z < 0 || d.v.X > math.MaxInt32 || d.v.Y > 65535 || d.v.Z > 65535 {
			return errors.Errorf("%s %v out of range", d.what, d.v)
		}
	}
	if n := max(b.X, 1) * max(b.Y, 1) * max(b.Z, 1); n > maxBlock || n&(n-1) != 0 {
		return errors.Errorf("block %v has %d threads, want a power of two up to %d", b, n, maxBlock)
	}
	return nil
}

// Dims are d's sizes with zeros as ones.
func (d Dim3) Dims() [3]uint32 {
	return [3]uint32{uint32(max(d.X, 1)), uint32(max(d.Y, 1)), uint32(max(d.Z, 1))}
}
