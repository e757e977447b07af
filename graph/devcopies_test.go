package graph_test

import (
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	. "github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/graph/cuda"
)

// countingBackend is a backend that counts its copies to the device and
// their bytes.
type countingBackend struct {
	Backend
	copies, bytes atomic.Int64
}

// ToDevice implements Backend.
func (c *countingBackend) ToDevice(dst DevicePtr, src []byte) error {
	c.copies.Add(1)
	c.bytes.Add(int64(len(src)))
	return c.Backend.ToDevice(dst, src)
}

// counted is a runtime on the simulated device whose copies to the device
// are counted.
func counted(t *testing.T) (*Runtime, *countingBackend) {
	t.Helper()
	simRuntime(t, Float32) // skips without g++
	sim, err := cuda.OpenSim(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c := &countingBackend{Backend: sim}
	rt, err := NewBackendRuntime(DeviceCUDA, c, Float32)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close() })
	return rt, c
}

// TestDeviceRunCopiesInputsOnly: once a training program has run, a run
// copies to the device its inputs and the parameters whose versions changed,
// not its broadcasting and transposing ops' layouts nor its constants: the
// scope's (Scope.Scalar) and Gorgonia's 1 that seeds the loss's gradient.
func TestDeviceRunCopiesInputsOnly(t *testing.T) {
	rt, c := counted(t)
	params := NewTestParams(t, tensor.Float32)
	s := NewScope(params)
	x := s.Input("x", tensor.Float32, 2, 3, 4)
	y := s.Mul(s.Add(x, s.Param("b", tensor.Shape{3, 1}, Normal(1))), s.Param("w", tensor.Shape{2, 1, 4}, Normal(1)))
	loss := s.Sum(s.Reshape(s.Transpose(s.Mul(y, s.Scalar(0.5)), 2, 0, 1), 24), 0, false)
	p, err := Compile(rt, s, loss, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	run := func(i int) (copies, bytes int64) {
		t.Helper()
		xs := make([]float32, 24)
		for k := range xs {
			xs[k] = float32(i + k)
		}
		if err := p.Set("x", xs); err != nil {
			t.Fatal(err)
		}
		c0, b0 := c.copies.Load(), c.bytes.Load()
		if err := p.Run(); err != nil {
			t.Fatal(err)
		}
		return c.copies.Load() - c0, c.bytes.Load() - b0
	}
	run(0)
	if copies, bytes := run(1); copies != 1 || bytes != 4*24 {
		t.Errorf("second run: %d copies to the device of %d bytes, want x's alone: 1 of 96", copies, bytes)
	}
	if err := params.Set("b", tensor.New(tensor.WithShape(3, 1), tensor.WithBacking([]float32{1, 2, 3}))); err != nil {
		t.Fatal(err)
	}
	if copies, bytes := run(2); copies != 2 || bytes != 4*(24+3) {
		t.Errorf("run after b changed: %d copies to the device of %d bytes, want x's and b's: 2 of 108", copies, bytes)
	}
}

// TestDeviceDropoutCopiesNoMask: a program with dropout draws its masks on
// the device, so that a run copies its input and the run's seed (a per-run
// word, 8 bytes), no mask, and the masks of successive runs are the CPU's
// bit for bit (213 elements: an odd count in a part word).
func TestDeviceDropoutCopiesNoMask(t *testing.T) {
	rt, c := counted(t)
	params := NewTestParams(t, tensor.Float32)
	compile := func(rt *Runtime) *Program {
		s := NewScope(params, Training(rand.New(rand.NewPCG(7, 1))))
		y := s.Dropout(s.Mul(s.Input("x", tensor.Float32, 3, 71), s.Param("w", tensor.Shape{1, 71}, Normal(1))), 0.4)
		p, err := Compile(rt, s, s.Sum(s.Reshape(y, 213), 0, false), map[string]*G.Node{"y": y})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.Close() })
		return p
	}
	cpu, dev := compile(CPU()), compile(rt)
	for i := range 3 {
		c0, b0 := c.copies.Load(), c.bytes.Load()
		for _, p := range []*Program{cpu, dev} {
			if err := p.Set("x", slices.Repeat([]float32{float32(i + 1)}, 213)); err != nil {
				t.Fatal(err)
			}
			if err := p.Run(); err != nil {
				t.Fatal(err)
			}
		}
		if copies, bytes := c.copies.Load()-c0, c.bytes.Load()-b0; i > 0 && (copies != 2 || bytes != 4*213+8) {
			t.Errorf("run %d: %d copies to the device of %d bytes, want x's and the seed's: 2 of %d", i, copies, bytes, 4*213+8)
		}
		want, got := cpu.Output("y").Data().([]float32), dev.Output("y").Data().([]float32)
		if !slices.Equal(got, want) {
			t.Errorf("run %d: the device's dropout %v differs from the CPU's %v", i, got, want)
		}
	}
}
