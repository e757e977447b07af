package graph

import (
	"maps"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"weak"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestProgramsShareArena runs two programs of different batch shapes, which
// train the same parameters, in turn: they must lay out their tensors in one
// block as large as the larger needs (not one block each, nor the smaller
// one kept once the arena grows), and each must compute the same loss and
// gradients as when it runs alone.
func TestProgramsShareArena(t *testing.T) {
	params, rt := newTestParams(t, tensor.Float32), CPU()
	compile := func(rows int) *Program {
		s := NewScope(params)
		x := s.Input("x", tensor.Float32, rows, 8)
		ids := s.Input("targets", tensor.Int, rows)
		w := s.Param("w", tensor.Shape{6, 8}, XavierUniform)
		h := s.ReLU(s.MatMul(x, w, true))
		p, err := Compile(rt, s, nll(s, h, ids), nil)
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
		return result{lossOf(t, p), slices.Clone(p.Grad("w").Data().([]float32))}
	}
	small, large := compile(3), compile(40)
	defer small.Close()
	defer large.Close()
	want := map[*Program]result{small: runOnce(small, 3)}
	first := weak.Make(&hostOf(rt).arena.f32[0])
	want[large] = runOnce(large, 40) // grows the arena
	runtime.GC()
	if first.Value() != nil {
		t.Error("the arena's first block is still reachable after it grew: the smaller program's nodes keep it")
	}
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
	if got := len(hostOf(rt).arena.f32); got < need || got > need+need/8 {
		t.Errorf("arena of %d float32s for programs needing %d and %d", got, small.layout.f32, large.layout.f32)
	}
	if small.layout.f32 == 0 || small.layout.f32 >= large.layout.f32 {
		t.Errorf("layouts of %d and %d float32s: want the larger batch to need more", small.layout.f32, large.layout.f32)
	}
}

// residualNet builds layers residual blocks on x [rows, d], x ← norm(x +
// dropout(relu(x·W))), all with the same W, and the negative
// log-likelihood of x·Wₒ: every x and W feed more than one op, so G.Grad sums
// their gradients with Gorgonia's `+` nodes, which the machine runs in place,
// in memory our ops wrote. Before each run, reseed resets dropout's random
// stream.
func residualNet(t testing.TB, dt tensor.Dtype, rows, d, layers int) (p *Program, reseed func()) {
	t.Helper()
	params, err := NewParams(dt, newTestRNG(1))
	if err != nil {
		t.Fatal(err)
	}
	pcg := rand.NewPCG(2, 0)
	s := NewScope(params, Training(rand.New(pcg)))
	x := s.Input("x", dt, rows, d)
	ids := s.Input("targets", tensor.Int, rows)
	w := s.Param("w", tensor.Shape{d, d}, XavierUniform)
	for i := range layers {
		l := s.In("layers", i)
		g := l.Param("g", tensor.Shape{d}, Ones)
		x = l.Normalize(s.Add(x, s.Dropout(s.ReLU(s.MatMul(x, w, false)), 0.1)), g, 1e-5, true)
	}
	out := s.Param("out", tensor.Shape{d, d}, XavierUniform)
	p, err = Compile(nil, s, nll(s, s.MatMul(x, out, false), ids), nil)
	if err != nil {
		t.Fatal(err)
	}
	x0 := make([]float64, rows*d)
	targets := make([]int, rows)
	for i := range x0 {
		x0[i] = float64(i%11)/5 - 1
	}
	for i := range targets {
		targets[i] = i * 7 % d
	}
	if err := p.Set("targets", targets); err != nil {
		t.Fatal(err)
	}
	copyFloats(p.inputs["x"].Value().(*tensor.Dense), x0)
	return p, func() { pcg.Seed(2, 0) }
}

// runState runs p, after reseed, and returns its loss and gradients.
func runState(t *testing.T, p *Program, reseed func()) map[string][]float64 {
	t.Helper()
	reseed()
	if err := p.Run(); err != nil {
		t.Fatal(err)
	}
	st := map[string][]float64{"loss": {lossOf(t, p)}}
	for _, name := range p.ParamNames() {
		st[name] = Float64s(p.Grad(name))
	}
	return st
}

// TestPlanWithoutFirstRun checks the layout planned at compile time, from
// the graph and Gorgonia's registers, against a run in which every op writes
// a tensor of its own: the loss and every gradient must be equal bit for bit,
// run after run (TestModelPlanWithoutFirstRun checks whole models, and that
// the check can fail).
func TestPlanWithoutFirstRun(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		t.Run(dt.String(), func(t *testing.T) {
			p, reseed := residualNet(t, dt, 24, 16, 4)
			defer p.Close()
			p.ownMemory(true)
			want := runState(t, p, reseed)
			p.ownMemory(false)
			for run := range 2 {
				if got := runState(t, p, reseed); !maps.EqualFunc(got, want, slices.Equal) {
					t.Fatalf("planned run %d differs from a run with memory of its own per op", run+1)
				}
			}
		})
	}
}

// TestFirstRunAllocatesNoActivations checks that a new program's first run
// allocates its arena and little else: not a set of activations of its own
// (every op's output), which is what planning after a first run cost.
func TestFirstRunAllocatesNoActivations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts under the race detector include the items its sync.Pool drops at random")
	}
	var before, compiled, ran runtime.MemStats
	runtime.ReadMemStats(&before)
	p, reseed := residualNet(t, tensor.Float32, 1024, 128, 8)
	defer p.Close()
	runtime.ReadMemStats(&compiled)
	reseed()
	if err := p.Run(); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&ran)
	var activations uint64
	for _, s := range p.layout.slots {
		activations += uint64(s.shape.TotalSize()) * uint64(s.dtype.Size())
	}
	arena := uint64(p.rt.ArenaBytes())
	if arena >= activations/2 {
		t.Errorf("arena of %d bytes for %d bytes of activations: want outputs to share memory", arena, activations)
	}
	if run := ran.TotalAlloc - compiled.TotalAlloc; run > arena+activations/16 {
		t.Errorf("first run allocated %d bytes: want the arena (%d) and at most 1/16 of the %d bytes of activations", run, arena, activations)
	}
	if all := ran.TotalAlloc - before.TotalAlloc; all > arena+activations/4 {
		t.Errorf("building, compiling and a first run allocated %d bytes: want the arena (%d) and at most 1/4 of the %d bytes of activations", all, arena, activations)
	}
}

// TestOutputReadByGorgonia checks an output that one of Gorgonia's ops reads
// last, and so overwrites in place (G.HadamardProd here, had the program not
// copied the output first), against what its op computed.
func TestOutputReadByGorgonia(t *testing.T) {
	s := NewScope(newTestParams(t, tensor.Float64))
	x := s.Input("x", tensor.Float64, 2, 3)
	y := s.ReLU(x)
	w := s.Param("w", tensor.Shape{2, 3}, XavierUniform)
	p, err := Compile(nil, s, nil, map[string]*G.Node{"y": y, "yw": G.Must(G.HadamardProd(y, w))})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	in := []float64{-1, 2, -3, 4, 5, -6}
	if err := p.Set("x", in); err != nil {
		t.Fatal(err)
	}
	if err := p.Run(); err != nil {
		t.Fatal(err)
	}
	got := Float64s(p.Output("y"))
	for i, v := range in {
		if want := max(v, 0); got[i] != want {
			t.Fatalf("output y = %v, want relu(x) = %v at %d", got, want, i)
		}
	}
}

// TestSiblingKeepsOutputs runs a program of a runtime and one of its
// Sibling in turn: each one's output stays what it computed while the
// other runs, which a second program of the same runtime would overwrite.
func TestSiblingKeepsOutputs(t *testing.T) {
	params, rt := newTestParams(t, tensor.Float32), CPU()
	compile := func(rt *Runtime, scale float64) *Program {
		s := NewScope(params)
		x := s.Input("x", tensor.Float32, 4, 8)
		w := s.Param("w", tensor.Shape{6, 8}, XavierUniform)
		p, err := Compile(rt, s, nil, map[string]*G.Node{"y": s.Mul(s.MatMul(x, w, true), s.Scalar(scale))})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Set("x", slices.Repeat([]float32{1, -2}, 16)); err != nil {
			t.Fatal(err)
		}
		return p
	}
	sib := rt.Sibling()
	if sib.Device() != rt.Device() || sib.Precision() != rt.Precision() {
		t.Fatalf("sibling on %v, runtime on %v", sib, rt)
	}
	a, b, c := compile(rt, 1), compile(sib, 2), compile(rt, 3)
	for _, p := range []*Program{a, b} {
		if err := p.Run(); err != nil {
			t.Fatal(err)
		}
	}
	ya, yb := a.Output("y"), b.Output("y")
	if ya == nil || yb == nil {
		t.Fatalf("outputs after the sibling ran: %v, %v", ya, yb)
	}
	for i, v := range ya.Data().([]float32) {
		if w := yb.Data().([]float32)[i]; w != 2*v {
			t.Fatalf("y[%d]: %v and %v, want the second twice the first", i, v, w)
		}
	}
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	if a.Output("y") != nil || b.Output("y") == nil {
		t.Error("a program of the runtime did not release the other's output, or released the sibling's")
	}
	for _, p := range []*Program{a, b, c} {
		p.Close()
	}
	if err := sib.Close(); err != nil {
		t.Fatal(err)
	}
}
