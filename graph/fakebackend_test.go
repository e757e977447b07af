package graph

import (
	"slices"
	"testing"

	"github.com/pkg/errors"
)

// memBackend is a Backend of host memory that runs no kernels and counts
// its copies to the device: for the tests of what the runtime keeps and
// copies, which need no kernel to run.
type memBackend struct {
	mem    map[DevicePtr][]byte
	next   DevicePtr
	copies int
}

func newMemBackend() *memBackend { return &memBackend{mem: map[DevicePtr][]byte{}, next: 1 << 20} }

func (m *memBackend) Name() string { return "memory" }

func (m *memBackend) Alloc(n int) (DevicePtr, error) {
	p := m.next
	m.mem[p] = make([]byte, n)
	m.next += DevicePtr((n + 255) &^ 255)
	return p, nil
}

func (m *memBackend) Free(p DevicePtr) error {
	if _, ok := m.mem[p]; !ok {
		return errors.New("not an allocation")
	}
	delete(m.mem, p)
	return nil
}

// at is the memory of [p, p+n).
func (m *memBackend) at(p DevicePtr, n int) ([]byte, error) {
	for base, b := range m.mem {
		if p >= base && int(p-base)+n <= len(b) {
			return b[p-base : int(p-base)+n], nil
		}
	}
	return nil, errors.Errorf("%d bytes at %#x are not memory", n, uint64(p))
}

func (m *memBackend) ToDevice(dst DevicePtr, src []byte) error {
	b, err := m.at(dst, len(src))
	m.copies++
	copy(b, src)
	return err
}

func (m *memBackend) ToHost(dst []byte, src DevicePtr) error {
	b, err := m.at(src, len(dst))
	copy(dst, b)
	return err
}

func (m *memBackend) Launch(l *Launch) error   { return l.Check() }
func (m *memBackend) Gemm(g *DeviceGEMM) error { return g.Check() }
func (m *memBackend) Sync() error              { return nil }
func (m *memBackend) Record(work func() error) (Replay, error) {
	return nil, errors.New("no recordings")
}
func (m *memBackend) Close() error { return nil }

// TestDeviceLayoutCopiedWhenItChanges: a node's layout goes to the device
// at its first use and whenever its values change, and the device holds
// them.
func TestDeviceLayoutCopiedWhenItChanges(t *testing.T) {
	b := newMemBackend()
	rt, err := NewBackendRuntime(DeviceCUDA, b, Float32)
	if err != nil {
		t.Fatal(err)
	}
	x := &deviceExec{t: rt.at.(*deviceTarget), b: b}
	d := &DeviceCall{x: x}
	for i, tc := range []struct {
		v      []int32
		copies int
	}{{[]int32{1, 2, 3}, 1}, {[]int32{1, 2, 3}, 0}, {[]int32{4, 5}, 1}, {[]int32{4, 5, 6, 7}, 1}, {[]int32{4, 5, 6, 7}, 0}} {
		c0 := b.copies
		p, err := d.Layout(0, tc.v)
		if err != nil {
			t.Fatal(err)
		}
		if n := b.copies - c0; n != tc.copies {
			t.Errorf("layout %d, %v: %d copies to the device, want %d", i, tc.v, n, tc.copies)
		}
		got := make([]int32, len(tc.v))
		if err := b.ToHost(asBytes(got), p); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, tc.v) {
			t.Errorf("layout %d: the device holds %v, want %v", i, got, tc.v)
		}
	}
}
