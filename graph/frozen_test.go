package graph

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// frozenCase is a program y = x·op(w) for a parameter w, run while its
// Params are frozen or not.
type frozenCase struct {
	params *Params
	prog   *Program
	x      []float64
	w      *tensor.Dense
	transW bool
}

// newFrozenCase builds y = x·op(w) for x [rows, in] and w [in, out] (or
// [out, in] when transW is set), with rows enough that the product packs w.
func newFrozenCase(t *testing.T, dt tensor.Dtype, transW bool) *frozenCase {
	t.Helper()
	const rows, in, out = 9, 21, 37
	params := newTestParams(t, dt)
	s := NewScope(params)
	shape := tensor.Shape{in, out}
	if transW {
		shape = tensor.Shape{out, in}
	}
	w := s.Param("w", shape, XavierUniform)
	x := s.Input("x", dt, rows, in)
	prog, err := Compile(nil, s, nil, map[string]*G.Node{"y": s.MatMul(x, w, transW)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = prog.Close() })
	rng := rand.New(rand.NewPCG(5, 6))
	xs := make([]float64, rows*in)
	for i := range xs {
		xs[i] = 2*rng.Float64() - 1
	}
	fc := &frozenCase{params: params, prog: prog, x: xs, w: params.Value("w"), transW: transW}
	if err := prog.Set("x", FromFloat64s(dt, xs, rows, in).Data()); err != nil {
		t.Fatal(err)
	}
	return fc
}

// check runs the program and compares y with x·op(w) for w's current values.
func (fc *frozenCase) check(t *testing.T, what string) {
	t.Helper()
	if err := fc.prog.Run(); err != nil {
		t.Fatal(err)
	}
	y := Float64s(fc.prog.Output("y"))
	w := Float64s(fc.w)
	in := len(fc.x) / 9
	out := len(w) / in
	for i := range 9 {
		for o := range out {
			want := 0.0
			for k := range in {
				wk := w[k*out+o]
				if fc.transW {
					wk = w[o*in+k]
				}
				want += fc.x[i*in+k] * wk
			}
			if got := y[i*out+o]; math.Abs(got-want) > 1e-5 {
				t.Fatalf("%s: y[%d,%d] = %g, want %g", what, i, o, got, want)
			}
		}
	}
}

// scale multiplies every element of w in place, as an optimizer would.
func (fc *frozenCase) scale(f float64) {
	switch d := fc.w.Data().(type) {
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

// wantCopies is how many packed copies a frozen parameter used by one
// product of 9 rows leaves: none where the BLAS packs its operands itself
// (OpenBLAS).
func wantCopies() int {
	if packPays(9) {
		return 1
	}
	return 0
}

// TestFreezeNeverStale checks that products with a frozen parameter reuse
// its packed copy, and that a change made after unfreezing, in place or
// with Set, is always seen.
func TestFreezeNeverStale(t *testing.T) {
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		for _, transW := range []bool{false, true} {
			fc := newFrozenCase(t, dt, transW)
			fc.check(t, "not frozen")
			unfreeze := fc.params.Freeze()
			fc.check(t, "frozen, first run")
			if n := len(fc.params.packs.copies); n != wantCopies() {
				t.Fatalf("%v transW=%t: %d packed copies while frozen, want %d", dt, transW, n, wantCopies())
			}
			fc.check(t, "frozen, second run")
			unfreeze()
			unfreeze() // a second call does nothing
			if fc.params.Frozen() || fc.params.packs.copies != nil {
				t.Fatalf("%v transW=%t: copies kept after unfreezing", dt, transW)
			}
			fc.scale(-2)
			fc.check(t, "not frozen after an update in place")
			unfreeze = fc.params.Freeze()
			fc.check(t, "frozen again after an update in place")
			if err := fc.params.Set("w", FromFloat64s(dt, Float64s(fc.w), fc.w.Shape()...)); err != nil {
				t.Fatal(err)
			}
			if fc.params.packs.copies != nil {
				t.Fatalf("%v transW=%t: Set kept the packed copies", dt, transW)
			}
			unfreeze()
		}
	}
}

// TestFreezeNests checks that the copies live until the outermost unfreeze.
func TestFreezeNests(t *testing.T) {
	fc := newFrozenCase(t, tensor.Float32, true)
	outer := fc.params.Freeze()
	inner := fc.params.Freeze()
	fc.check(t, "frozen twice")
	inner()
	if !fc.params.Frozen() || len(fc.params.packs.copies) != wantCopies() {
		t.Fatal("the inner unfreeze dropped the copies")
	}
	outer()
	fc.scale(0.5)
	fc.check(t, "after the outer unfreeze and an update")
}

// TestPackedOnlyOwnElements checks that only the parameter's own elements
// are packed and kept, not a copy of them (which a run could make and
// drop), and nothing for products too small to gain from it.
func TestPackedOnlyOwnElements(t *testing.T) {
	params := newTestParams(t, tensor.Float32)
	v, err := params.Get("w", tensor.Shape{4, 6}, XavierUniform)
	if err != nil {
		t.Fatal(err)
	}
	wp := &param{packs: &params.packs, value: v}
	defer params.Freeze()()
	if pw := packed(wp, false, 9, 4, 6, slices.Clone(v.Float32s())); pw != nil {
		t.Error("a copy of the parameter was packed")
	}
	if pw := packed(wp, false, 1, 4, 6, v.Float32s()); pw != nil {
		t.Error("the parameter was packed for a product of one row")
	}
	if pw := packed(wp, false, 9, 4, 6, v.Float32s()); (pw != nil) != packPays(9) || len(params.packs.copies) != wantCopies() {
		t.Errorf("the parameter's own elements: %v packed, %d copies kept", pw, len(params.packs.copies))
	}
}
