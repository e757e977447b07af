package cuda

import (
	"math"
	"runtime"
	"unsafe"

	"github.com/pkg/errors"
)

// Ptr is an address in a device's memory; 0 is the null pointer, which a
// kernel may take where it documents an optional input.
type Ptr uint64

// Add is p moved on by bytes.
func (p Ptr) Add(bytes int) Ptr { return p + Ptr(bytes) }

// Dim3 is a grid or block size; a zero component counts as 1.
type Dim3 struct{ X, Y, Z int }

// dims is d with zeros as ones, checked against CUDA's limits.
func (d Dim3) dims(what string) ([3]uint32, error) {
	v := [3]int{max(d.X, 1), max(d.Y, 1), max(d.Z, 1)}
	if d.X < 0 || d.Y < 0 || d.Z < 0 || v[0] > math.MaxInt32 || v[1] > 65535 || v[2] > 65535 {
		return [3]uint32{}, errors.Errorf("%s %v out of range", what, d)
	}
	return [3]uint32{uint32(v[0]), uint32(v[1]), uint32(v[2])}, nil
}

// Device is what a program needs of a place to run: memory, the kernels of
// kernels/*.cu by name, and matrix products. The CUDA device and the
// simulated one implement it. A Device is safe for concurrent use; its
// launches and products run in the order they are made.
type Device interface {
	// Name says which device this is, for logs.
	Name() string
	// Alloc returns bytes of device memory, not initialized.
	Alloc(bytes int) (Ptr, error)
	// Free releases what Alloc returned.
	Free(p Ptr) error
	// ToDevice copies src to dst, which must lie within one allocation.
	ToDevice(dst Ptr, src []byte) error
	// ToHost copies from src into dst after the work before it has ended.
	ToHost(dst []byte, src Ptr) error
	// Launch runs kernel on grid × block threads with args, checked against
	// the kernel's parameters: Ptr for a pointer, int32 (or an int that fits)
	// for int, float32 for float, uint64 for unsigned long long.
	Launch(kernel string, grid, block Dim3, args ...any) error
	// Gemm runs a matrix product (see GEMM).
	Gemm(g GEMM) error
	// Sync waits for the work launched so far.
	Sync() error
	// Close frees everything the device holds.
	Close() error
}

// GEMM is Batch row-major products C = Alpha·op(A)·op(B) + Beta·C with op(A)
// [M, K], op(B) [K, N], C [M, N]; op transposes when Trans is set. LDA, LDB
// and LDC are the stored matrices' row strides and StrideA, StrideB, StrideC
// the distances between a batch's matrices, all in elements (StrideA or
// StrideB may be 0: one matrix for the whole batch). With BF16, A
// and B hold bfloat16 and the sums are float32 (cuBLAS GemmEx); else all
// are float32 (cuBLAS Sgemm). C is not read when Beta is 0.
type GEMM struct {
	TransA, TransB            bool
	M, N, K                   int
	Alpha, Beta               float32
	A, B, C                   Ptr
	LDA, LDB, LDC             int
	BF16                      bool
	Batch                     int
	StrideA, StrideB, StrideC int
}

// check says what is wrong with g, if anything, its matrices being in
// the allocations live.
func (g GEMM) check(live allocs) error {
	ra, ca := g.M, g.K
	if g.TransA {
		ra, ca = g.K, g.M
	}
	rb, cb := g.K, g.N
	if g.TransB {
		rb, cb = g.N, g.K
	}
	const lim = math.MaxInt32
	switch {
	case g.M < 1 || g.N < 1 || g.K < 1 || g.M > lim || g.N > lim || g.K > lim:
		return errors.Errorf("gemm: sizes M=%d N=%d K=%d must be in [1, 2^31)", g.M, g.N, g.K)
	case g.LDA < ca || g.LDB < cb || g.LDC < g.N || g.LDA > lim || g.LDB > lim || g.LDC > lim:
		return errors.Errorf("gemm: row strides LDA=%d LDB=%d LDC=%d, need at least %d, %d, %d", g.LDA, g.LDB, g.LDC, ca, cb, g.N)
	case g.Batch < 1 || g.Batch > lim:
		return errors.Errorf("gemm: batch %d must be in [1, 2^31)", g.Batch)
	case g.Batch > 1 && (g.StrideA < 0 || g.StrideB < 0 || g.StrideC < g.M*g.LDC):
		return errors.Errorf("gemm: batch strides %d, %d, %d: want A's and B's at least 0 and C's at least %d (no overlap)",
			g.StrideA, g.StrideB, g.StrideC, g.M*g.LDC)
	}
	size := 4
	if g.BF16 {
		size = 2
	}
	for _, m := range []struct {
		name                         string
		p                            Ptr
		stride, rows, ld, cols, size int
	}{{"A", g.A, g.StrideA, ra, g.LDA, ca, size}, {"B", g.B, g.StrideB, rb, g.LDB, cb, size}, {"C", g.C, g.StrideC, g.M, g.LDC, g.N, 4}} {
		n := ((g.Batch-1)*m.stride + (m.rows-1)*m.ld + m.cols) * m.size
		if err := live.within(m.p, n); err != nil {
			return errors.Wrapf(err, "gemm: matrix %s", m.name)
		}
	}
	return nil
}

// args packs a kernel's arguments as cuLaunchKernel takes them: each value
// in an 8-byte slot of vals, and ptrs[i] the address of slot i. The slots
// are pinned until unpin is called, so that the C side may hold their
// addresses.
type args struct {
	vals   []uint64
	ptrs   []unsafe.Pointer
	pinner runtime.Pinner
}

// packArgs checks in against sig and packs it.
func packArgs(name string, sig []param, in []any) (*args, error) {
	if len(in) != len(sig) {
		return nil, errors.Errorf("kernel %s takes %d arguments, have %d", name, len(sig), len(in))
	}
	a := &args{vals: make([]uint64, len(in)), ptrs: make([]unsafe.Pointer, len(in))}
	for i, v := range in {
		slot, err := sig[i].pack(v)
		if err != nil {
			return nil, errors.Wrapf(err, "kernel %s, argument %d (%s)", name, i+1, sig[i].name)
		}
		a.vals[i] = slot
	}
	if len(in) > 0 {
		a.pinner.Pin(&a.vals[0])
		for i := range a.vals {
			a.ptrs[i] = unsafe.Pointer(&a.vals[i])
		}
		a.pinner.Pin(&a.ptrs[0])
	}
	return a, nil
}

// list is the address of the pointer array, for the C side.
func (a *args) list() unsafe.Pointer {
	if len(a.ptrs) == 0 {
		return nil
	}
	return unsafe.Pointer(&a.ptrs[0])
}

// pack returns v in an argument slot if it has p's kind.
func (p param) pack(v any) (uint64, error) {
	switch x := v.(type) {
	case Ptr:
		if p.kind == kindPtr {
			return uint64(x), nil
		}
	case int32:
		if p.kind == kindInt {
			return uint64(uint32(x)), nil
		}
	case int:
		if p.kind == kindInt {
			if x < math.MinInt32 || x > math.MaxInt32 {
				return 0, errors.Errorf("%d does not fit a C int", x)
			}
			return uint64(uint32(int32(x))), nil
		}
	case float32:
		if p.kind == kindFloat {
			return uint64(math.Float32bits(x)), nil
		}
	case uint64:
		if p.kind == kindU64 {
			return x, nil
		}
	}
	return 0, errors.Errorf("have %T, want %s", v, p.kind)
}

// allocs are a device's live allocations, base to size, so that copies are
// checked before they touch memory.
type allocs map[Ptr]int

// within says whether [p, p+n) lies in one allocation.
func (m allocs) within(p Ptr, n int) error {
	for base, size := range m {
		if p >= base && uint64(p-base)+uint64(n) <= uint64(size) {
			return nil
		}
	}
	return errors.Errorf("%d bytes at %#x are not within one allocation", n, uint64(p))
}

// Float32Bytes is x's memory as bytes, for ToDevice and ToHost.
func Float32Bytes(x []float32) []byte {
	if len(x) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&x[0])), 4*len(x))
}

// Int32Bytes is Float32Bytes for int32.
func Int32Bytes(x []int32) []byte {
	if len(x) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&x[0])), 4*len(x))
}

// Uint64Bytes is Float32Bytes for uint64 (dropout masks).
func Uint64Bytes(x []uint64) []byte {
	if len(x) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&x[0])), 8*len(x))
}

// Uint16Bytes is Float32Bytes for uint16 (bfloat16).
func Uint16Bytes(x []uint16) []byte {
	if len(x) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&x[0])), 2*len(x))
}
