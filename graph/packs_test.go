package graph

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// packCase is a program y = x·op(w) for a parameter w, x [packRows, in].
type packCase struct {
	params *Params
	rt     *Runtime
	prog   *Program
	x      []float64
	w      *tensor.Dense
	transW bool
}

// packRows is the rows of a packCase's x: enough that the product packs w.
const packRows = 9

// newPackCase builds y = x·op(w) on rt for x [packRows, 21] and w [21, 37]
// (or [37, 21] when transW is set) of params, creating w the first time.
func newPackCase(t *testing.T, params *Params, rt *Runtime, transW bool) *packCase {
	t.Helper()
	const in, out = 21, 37
	dt := params.Dtype()
	s := NewScope(params)
	shape := tensor.Shape{in, out}
	if transW {
		shape = tensor.Shape{out, in}
	}
	w := s.Param("w", shape, XavierUniform)
	x := s.Input("x", dt, packRows, in)
	prog, err := Compile(rt, s, nil, map[string]*G.Node{"y": s.MatMul(x, w, transW)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = prog.Close() })
	rng := rand.New(rand.NewPCG(5, 6))
	xs := make([]float64, packRows*in)
	for i := range xs {
		xs[i] = 2*rng.Float64() - 1
	}
	if err := prog.Set("x", FromFloat64s(dt, xs, packRows, in).Data()); err != nil {
		t.Fatal(err)
	}
	return &packCase{params: params, rt: rt, prog: prog, x: xs, w: params.Value("w"), transW: transW}
}

// run runs the program and returns y.
func (pc *packCase) run(t *testing.T) []float64 {
	t.Helper()
	if err := pc.prog.Run(); err != nil {
		t.Fatal(err)
	}
	return Float64s(pc.prog.Output("y"))
}

// check runs the program and compares y with x·op(w) for w's current values.
func (pc *packCase) check(t *testing.T, what string) {
	t.Helper()
	y := pc.run(t)
	w := Float64s(pc.w)
	in := len(pc.x) / packRows
	out := len(w) / in
	for i := range packRows {
		for o := range out {
			want := 0.0
			for k := range in {
				wk := w[k*out+o]
				if pc.transW {
					wk = w[o*in+k]
				}
				want += pc.x[i*in+k] * wk
			}
			if got := y[i*out+o]; math.Abs(got-want) > 1e-5 {
				t.Fatalf("%s: y[%d,%d] = %g, want %g", what, i, o, got, want)
			}
		}
	}
}

// scale multiplies every element of w in place, as an optimizer would,
// without announcing it.
func (pc *packCase) scale(f float64) {
	switch d := pc.w.Data().(type) {
	case []float32:
		for i := range d {
			d[i] *= float32(f)
		}
	case []float64:
		for i := range d {
			d[i] *= f
		}
	}
}

// copyOf is the copy of w that pc's runtime keeps for its product, nil if
// none.
func (pc *packCase) copyOf() *packCopy {
	for key, c := range hostOf(pc.rt).packs.copies {
		if key.param == pc.params.versions["w"] {
			return c
		}
	}
	return nil
}

// TestPacksReusedWhileUnchanged checks the life of a weight's packed copy:
// none at the first product that reads a version of the weight, one made
// at the second and reused by the next (a change that is not announced
// goes unseen, which shows it), none read after the weight is Updated or
// Set, the next one packed into the same memory, and that memory let go
// once a whole version passes without a copy.
func TestPacksReusedWhileUnchanged(t *testing.T) {
	if !packPays(packRows) {
		t.Skip("this BLAS packs its operands itself")
	}
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		for _, transW := range []bool{false, true} {
			pc := newPackCase(t, newTestParams(t, dt), CPU(), transW)
			pc.check(t, "first run")
			if c := pc.copyOf(); c == nil || c.pack != nil {
				t.Fatalf("%v transW=%t: after one run, copy %+v, want one counting a read, without a pack", dt, transW, c)
			}
			pc.check(t, "second run")
			first := pc.copyOf().pack
			if first == nil || len(hostOf(pc.rt).packs.copies) != 1 {
				t.Fatalf("%v transW=%t: no copy after two runs, or more than one (%d)", dt, transW, len(hostOf(pc.rt).packs.copies))
			}
			y := pc.run(t)
			pc.scale(-2) // not announced: the copy is read
			if got := pc.run(t); !slices.Equal(got, y) {
				t.Fatalf("%v transW=%t: the run after an unannounced change did not read the copy", dt, transW)
			}
			pc.params.Updated("w")
			pc.check(t, "first run after Updated")
			pc.check(t, "second run after Updated")
			if c := pc.copyOf(); c.pack != first || !c.current {
				t.Fatalf("%v transW=%t: the copy after Updated was not packed into the first one's memory", dt, transW)
			}
			if err := pc.params.Set("w", FromFloat64s(dt, slices.Repeat([]float64{0.5}, pc.w.Shape().TotalSize()), pc.w.Shape()...)); err != nil {
				t.Fatal(err)
			}
			pc.check(t, "after Set")
			pc.params.Updated()
			pc.check(t, "after Updated of every parameter")
			if c := pc.copyOf(); c.pack != nil {
				t.Fatalf("%v transW=%t: a copy not made again for a whole version was kept", dt, transW)
			}
		}
	}
}

// TestPacksSharedByPrograms checks that two programs of one runtime
// reading one parameter share its copy: the second program's first run
// reads the copy the first program's runs made; and that the copy goes
// when the last of them is closed.
func TestPacksSharedByPrograms(t *testing.T) {
	if !packPays(packRows) {
		t.Skip("this BLAS packs its operands itself")
	}
	params, rt := newTestParams(t, tensor.Float32), CPU()
	a := newPackCase(t, params, rt, true)
	b := newPackCase(t, params, rt, true)
	a.check(t, "a")
	b.check(t, "b, the second read")
	if len(hostOf(rt).packs.copies) != 1 || a.copyOf().pack == nil {
		t.Fatalf("%d copies after two programs read w, want 1 that holds a pack", len(hostOf(rt).packs.copies))
	}
	y := b.run(t)
	a.scale(3) // not announced
	if got := b.run(t); !slices.Equal(got, y) {
		t.Fatal("b did not read the copy")
	}
	params.Updated("w")
	a.check(t, "a after Updated")
	b.check(t, "b after Updated")
	b.check(t, "b, packing again")
	if err := a.prog.Close(); err != nil {
		t.Fatal(err)
	}
	if len(hostOf(rt).packs.copies) != 1 {
		t.Fatal("closing a left b without w's copy")
	}
	if err := b.prog.Close(); err != nil {
		t.Fatal(err)
	}
	if len(hostOf(rt).packs.copies) != 0 || len(hostOf(rt).packs.readers) != 0 {
		t.Fatalf("closing every program that reads w left %d copies and %d readers", len(hostOf(rt).packs.copies), len(hostOf(rt).packs.readers))
	}
}

// TestPacksNeverStaleAcrossRuntimes checks that a change of a parameter
// that two runtimes' programs read is seen by both, each runtime keeping
// its own copy.
func TestPacksNeverStaleAcrossRuntimes(t *testing.T) {
	params := newTestParams(t, tensor.Float64)
	one := newPackCase(t, params, CPU(), false)
	two := newPackCase(t, params, CPU(), false)
	for range 2 {
		one.check(t, "first runtime")
		two.check(t, "second runtime")
	}
	one.scale(0.25)
	params.Updated("w")
	for range 3 {
		one.check(t, "first runtime after Updated")
	}
	two.check(t, "second runtime after Updated")
	if err := params.Set("w", FromFloat64s(tensor.Float64, Float64s(one.w), one.w.Shape()...)); err != nil {
		t.Fatal(err)
	}
	one.scale(-1)
	params.Updated()
	two.check(t, "second runtime after Set and Updated")
	one.check(t, "first runtime after Set and Updated")
}

// TestPacksAnyGOMAXPROCS checks that a copy packed at one GOMAXPROCS
// gives the products at another, bit for bit, what w read as it is gives:
// for a product split among goroutines.
func TestPacksAnyGOMAXPROCS(t *testing.T) {
	const rows, in, out = 70, 300, 90
	var want []float64
	for _, procs := range [][2]int{{1, 3}, {3, 1}} {
		s := NewScope(newTestParams(t, tensor.Float32))
		x, w := s.Param("x", tensor.Shape{rows, in}, Normal(1)), s.Param("w", tensor.Shape{in, out}, Normal(0.1))
		p, err := Compile(nil, s, nil, map[string]*G.Node{"y": s.MatMul(x, w, false)})
		if err != nil {
			t.Fatal(err)
		}
		for i, n := range []int{procs[0], procs[0], procs[1]} { // unpacked, packed, reused
			prev := runtime.GOMAXPROCS(n)
			if err := p.Run(); err != nil {
				t.Fatal(err)
			}
			runtime.GOMAXPROCS(prev)
			y := Float64s(p.Output("y"))
			if want == nil {
				want = y
			}
			if !slices.Equal(y, want) {
				t.Fatalf("GOMAXPROCS %v, run %d: y differs from the first run's", procs, i)
			}
		}
		_ = p.Close()
	}
}

// TestPackedOnlyOwnElements checks that only the parameter's own elements
// are packed and kept, not a copy of them (which a run could make and
// drop), and nothing for products too small to gain from it or for a
// parameter whose program was not compiled.
func TestPackedOnlyOwnElements(t *testing.T) {
	params := newTestParams(t, tensor.Float32)
	v, err := params.Get("w", tensor.Shape{4, 6}, XavierUniform)
	if err != nil {
		t.Fatal(err)
	}
	wp := &param{value: v, version: params.versions["w"]}
	if pw := packed(wp, false, 9, 4, 6, v.Float32s()); pw != nil {
		t.Error("a parameter of no runtime was packed")
	}
	rt := CPU()
	wp.packs = &hostOf(rt).packs
	for range 2 {
		if pw := packed(wp, false, 9, 4, 6, slices.Clone(v.Float32s())); pw != nil {
			t.Error("a copy of the parameter was packed")
		}
		if pw := packed(wp, false, 1, 4, 6, v.Float32s()); pw != nil {
			t.Error("the parameter was packed for a product of one row")
		}
	}
	// A build whose BLAS packs its operands itself (openblas) keeps no copy.
	if pw := packed(wp, false, 9, 4, 6, v.Float32s()); pw != nil || (len(hostOf(rt).packs.copies) == 1) != packPays(9) {
		t.Errorf("the parameter's own elements, first read: %v packed, %d copies", pw, len(hostOf(rt).packs.copies))
	}
	if pw := packed(wp, false, 9, 4, 6, v.Float32s()); (pw != nil) != packPays(9) {
		t.Errorf("the parameter's own elements, second read: %v packed", pw)
	}
}
