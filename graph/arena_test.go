package graph

import (
	"slices"
	"testing"

	"gorgonia.org/tensor"
)

// TestProgramsShareArena runs two programs of different batch shapes, which
// train the same parameters, in turn: they must lay out their tensors in one
// block as large as the larger needs (not one block each), and each must
// compute the same loss and gradients as when it runs alone.
func TestProgramsShareArena(t *testing.T) {
	params := newTestParams(t, tensor.Float32)
	compile := func(rows int) *Program {
		s := NewScope(params)
		x := s.Input("x", tensor.Float32, rows, 8)
		ids := s.Input("targets", tensor.Int, rows)
		w := s.Param("w", tensor.Shape{6, 8}, XavierUniform)
		h := s.ReLU(s.MatMul(x, w, true))
		p, err := Compile(s, s.SmoothedCrossEntropyLogits(h, ids, 0.1, -1), nil)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	feed := func(p *Program, rows int) {
		x := make([]float32, rows*8)
		ids := make([]int, rows)
		for i := range x {
			x[i] = float32(i%7) - 3
		}
		for i := range ids {
			ids[i] = i % 6
		}
		if err := p.Set("x", x); err != nil {
			t.Fatal(err)
		}
		if err := p.Set("targets", ids); err != nil {
			t.Fatal(err)
		}
	}
	type result struct {
		loss float64
		grad []float32
	}
	runOnce := func(p *Program, rows int) result {
		feed(p, rows)
		if err := p.Run(); err != nil {
			t.Fatal(err)
		}
		return result{p.Loss(), slices.Clone(p.Grad("w").Data().([]float32))}
	}
	small, large := compile(3), compile(40)
	defer small.Close()
	defer large.Close()
	want := map[*Program]result{small: runOnce(small, 3), large: runOnce(large, 40)}
	for i, p := range []*Program{small, large, small, small, large} {
		rows := 3
		if p == large {
			rows = 40
		}
		got := runOnce(p, rows)
		if got.loss != want[p].loss || !slices.Equal(got.grad, want[p].grad) {
			t.Fatalf("run %d (%d rows): loss %v, gradient %v; alone it gave %v, %v", i, rows, got.loss, got.grad[:4], want[p].loss, want[p].grad[:4])
		}
	}
	need := max(small.layout.f32, large.layout.f32)
	if got := len(params.arena.f32); got < need || got > need+need/8 {
		t.Errorf("arena of %d float32s for programs needing %d and %d", got, small.layout.f32, large.layout.f32)
	}
	if small.layout.f32 == 0 || small.layout.f32 >= large.layout.f32 {
		t.Errorf("layouts of %d and %d float32s: want the larger batch to need more", small.layout.f32, large.layout.f32)
	}
}
