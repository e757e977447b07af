package graph

import (
	"math"
	"slices"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	blas "github.com/transformer-go/transformer/graph/internal/gemm"
)

// TestBF16Products checks MatMul, Affine and AffineReLU and their
// gradients in a program compiled with BF16 products against float64
// products of the operands rounded to bfloat16, within float32's
// accumulation error: y = f(x·op(w) + b), loss = Σ y⊙r, so dy = r and
//
//	dx = R(dz)·R(op(w))ᵀ,  d op(w) = R(x)ᵀ·R(dz),  db = Σ_rows dz
//
// (R: rounding to bfloat16; dz = dy, or dy where y > 0 for AffineReLU);
// with w as it is and transposed, read as it is (the first run) or packed
// (the second). The same
// graph compiled in float32 must differ: the option is not ignored.
func TestBF16Products(t *testing.T) {
	const rows, in, out = 67, 70, 60
	for _, kind := range []string{"matmul", "affine", "affine_relu"} {
		for _, transW := range []bool{false, true} {
			params := newTestParams(t, tensor.Float32)
			c := newProductCase(params, kind, transW, rows, in, out)
			bf, err := Compile(newTestRuntime(t, BF16), c.s, c.loss, map[string]*G.Node{"y": c.y})
			if err != nil {
				t.Fatal(err)
			}
			c32 := newProductCase(params, kind, transW, rows, in, out)
			f32, err := Compile(nil, c32.s, c32.loss, map[string]*G.Node{"y": c32.y})
			if err != nil {
				t.Fatal(err)
			}
			if bf.Precision() != BF16 || f32.Precision() != Float32 {
				t.Fatalf("precisions %v and %v, want bf16 and float32", bf.Precision(), f32.Precision())
			}
			for range 2 { // the second run packs w
				c.check(t, bf, kind, transW)
			}
			bfY := Float64s(bf.Output("y"))
			if err := f32.Set("r", c.r); err != nil {
				t.Fatal(err)
			}
			if err := f32.Run(); err != nil {
				t.Fatal(err)
			}
			if f32Y := Float64s(f32.Output("y")); equalFloats(f32Y, bfY) {
				t.Errorf("%s transW %t: float32 and bf16 programs give the same y", kind, transW)
			}
			_, _ = bf.Close(), f32.Close()
		}
	}
}

// productCase is the graph of TestBF16Products.
type productCase struct {
	params  *Params
	s       *Scope
	y, loss *G.Node
	r       []float32
	rows    int
	in, out int
}

func newProductCase(params *Params, kind string, transW bool, rows, in, out int) *productCase {
	s := NewScope(params)
	shape := tensor.Shape{in, out}
	if transW {
		shape = tensor.Shape{out, in}
	}
	x := s.Param("x", tensor.Shape{rows, in}, Normal(1))
	w := s.Param("w", shape, Normal(0.3))
	r := s.Input("r", tensor.Float32, rows, out)
	var y *G.Node
	switch kind {
	case "matmul":
		y = s.MatMul(x, w, transW)
	case "affine":
		y = s.Affine(x, w, s.Param("b", tensor.Shape{out}, Normal(1)), transW)
	default:
		y = s.AffineReLU(x, w, s.Param("b", tensor.Shape{out}, Normal(1)), transW)
	}
	loss := s.Sum(s.Sum(s.Mul(y, r), 1, false), 0, false)
	rs := make([]float32, rows*out)
	rng := newTestRNG(3)
	for i := range rs {
		rs[i] = float32(rng.NormFloat64())
	}
	return &productCase{params: params, s: s, y: y, loss: loss, r: rs, rows: rows, in: in, out: out}
}

// check runs p and compares y and the gradients with the references.
func (c *productCase) check(t *testing.T, p *Program, kind string, transW bool) {
	t.Helper()
	if err := p.Set("r", c.r); err != nil {
		t.Fatal(err)
	}
	if err := p.Run(); err != nil {
		t.Fatal(err)
	}
	x, w := c.params.Value("x").Float32s(), c.params.Value("w").Float32s()
	var b []float32
	if kind != "matmul" {
		b = c.params.Value("b").Float32s()
	}
	// wt is op(w) [in, out].
	wt := func(i, o int) float32 {
		if transW {
			return w[o*c.in+i]
		}
		return w[i*c.out+o]
	}
	y := p.Output("y").Float32s()
	dz := make([]float32, len(c.r))
	for i := range c.rows {
		for o := range c.out {
			sum, abs := dotBF16(c.in, func(q int) (float32, float32) { return x[i*c.in+q], wt(q, o) })
			if kind != "matmul" {
				sum, abs = sum+float64(b[o]), abs+math.Abs(float64(b[o]))
			}
			if kind == "affine_relu" {
				sum = max(sum, 0)
			}
			checkClose(t, kind+" y", i, o, float64(y[i*c.out+o]), sum, abs, c.in)
			if kind != "affine_relu" || y[i*c.out+o] > 0 {
				dz[i*c.out+o] = c.r[i*c.out+o]
			}
		}
	}
	dx, dw := p.Grad("x").Float32s(), p.Grad("w").Float32s()
	for i := range c.rows {
		for q := range c.in {
			sum, abs := dotBF16(c.out, func(o int) (float32, float32) { return dz[i*c.out+o], wt(q, o) })
			checkClose(t, kind+" dx", i, q, float64(dx[i*c.in+q]), sum, abs, c.out)
		}
	}
	for q := range c.in {
		for o := range c.out {
			sum, abs := dotBF16(c.rows, func(i int) (float32, float32) { return x[i*c.in+q], dz[i*c.out+o] })
			got := dw[q*c.out+o]
			if transW {
				got = dw[o*c.in+q]
			}
			checkClose(t, kind+" dw", q, o, float64(got), sum, abs, c.rows)
		}
	}
}

// dotBF16 is Σ_j R(a_j)·R(b_j) over j < n in float64, and Σ_j |R(a_j)·R(b_j)|,
// for the pairs (a_j, b_j) = ab(j).
func dotBF16(n int, ab func(j int) (float32, float32)) (sum, abs float64) {
	for j := range n {
		a, b := ab(j)
		v := float64(blas.RoundBF16(a)) * float64(blas.RoundBF16(b))
		sum, abs = sum+v, abs+math.Abs(v)
	}
	return sum, abs
}

// checkClose reports got off want by more than float32's worst-case error
// for a sum of k terms whose magnitudes sum to abs.
func checkClose(t *testing.T, what string, i, j int, got, want, abs float64, k int) {
	t.Helper()
	if bound := 2 * float64(k+2) * 0x1p-24 * abs; math.Abs(got-want) > bound {
		t.Fatalf("%s[%d,%d] = %v, want %v ± %.2g", what, i, j, got, want, bound)
	}
}

func equalFloats(a, b []float64) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}

// TestRuntimes checks that a program's precision is its runtime's, and
// that runtimes refuse what they cannot run: bf16 products of a float64
// graph, unknown precisions and devices. Without a GPU, DeviceCUDA is an
// error and DeviceAuto falls back to the CPU, saying why.
func TestRuntimes(t *testing.T) {
	build := func(params *Params) *Scope {
		s := NewScope(params)
		s.MatMul(s.Input("x", params.Dtype(), 2, 3), s.Param("w", tensor.Shape{3, 4}, Normal(1)), false)
		return s
	}
	params := newTestParams(t, tensor.Float32)
	for _, c := range []struct {
		rt   *Runtime
		want Precision
	}{{nil, Float32}, {CPU(), Float32}, {newTestRuntime(t, Float32), Float32}, {newTestRuntime(t, BF16), BF16}} {
		p, err := Compile(c.rt, build(params), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if p.Precision() != c.want || p.Runtime().Device() != DeviceCPU {
			t.Errorf("runtime %v: program on %v %v, want cpu %v", c.rt, p.Runtime().Device(), p.Precision(), c.want)
		}
		_ = p.Close()
	}
	if _, err := NewRuntime(DeviceCPU, "bf8"); err == nil {
		t.Error("precision bf8: no error")
	}
	if _, err := NewRuntime("tpu", Float32); err == nil || !strings.Contains(err.Error(), `"tpu"`) {
		t.Errorf("device tpu: error %v, want one naming it", err)
	}
	if _, err := NewRuntime(DeviceCUDA, Float32); err == nil || !strings.Contains(err.Error(), "device: cuda: ") {
		t.Errorf("device cuda, which runs no programs yet: error %v, want one naming the device", err)
	}
	if rt, err := NewRuntime(DeviceAuto, BF16); err != nil || rt.Device() != DeviceCPU || rt.Fallback() == "" {
		t.Errorf("device auto: %v, %v; want the CPU and the reason", rt, err)
	}
	p64 := newTestParams(t, tensor.Float64)
	if _, err := Compile(newTestRuntime(t, BF16), build(p64), nil, nil); err == nil {
		t.Error("a float64 graph compiled with bf16 products: no error")
	}
	for s, want := range map[string]Precision{"": Float32, "float32": Float32, "bf16": BF16} {
		if got, err := ParsePrecision(s); err != nil || got != want {
			t.Errorf("ParsePrecision(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"bfloat16", "fp16", "BF16", "float64"} {
		if _, err := ParsePrecision(s); err == nil {
			t.Errorf("ParsePrecision(%q): no error", s)
		}
	}
	for s, want := range map[string]Device{"": DeviceCPU, "cpu": DeviceCPU, "cuda": DeviceCUDA, "auto": DeviceAuto} {
		if got, err := ParseDevice(s); err != nil || got != want {
			t.Errorf("ParseDevice(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"gpu", "CUDA", "cuda:0"} {
		if _, err := ParseDevice(s); err == nil {
			t.Errorf("ParseDevice(%q): no error", s)
		}
	}
}

// newTestRuntime is a CPU runtime with products of precision p.
func newTestRuntime(t *testing.T, p Precision) *Runtime {
	t.Helper()
	rt, err := NewRuntime(DeviceCPU, p)
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// TestBF16Batched checks BatchedMatMul and its gradients in a BF16 program against the float32
// program of the same graph on operands rounded to bfloat16 beforehand:
// equal up to the order of float32 sums. loss = Σ y⊙r with r rounded, so
// that dy needs no rounding either. Products too small for bfloat16
// to pay (blas.BF16Pays) stay float32: with heads of 4 those of the BF16 program
// equal the float32 program's on the operands as they are, bit for bit.
func TestBF16Batched(t *testing.T) {
	for _, d := range []batchedDims{{1, 64, 66, 2, 64}, {2, 5, 7, 3, 4}} {
		small := !blas.BF16Pays(d.lq, d.lk, d.dk)
		var progs [2]*Program
		for i, prec := range []Precision{BF16, Float32} {
			progs[i] = d.program(t, prec, !small && prec == Float32)
			defer progs[i].Close()
		}
		for _, name := range []string{"y", "a", "b"} {
			var got [2][]float32
			for i, p := range progs {
				if err := p.Run(); err != nil {
					t.Fatal(err)
				}
				if name == "y" {
					got[i] = slices.Clone(p.Output("y").Float32s())
				} else {
					got[i] = slices.Clone(p.Grad(name).Float32s())
				}
			}
			for j := range got[0] {
				d := math.Abs(float64(got[0][j] - got[1][j]))
				if small && d != 0 || d > 1e-5*(1+math.Abs(float64(got[1][j]))) {
					t.Fatalf("small %t: %s[%d] = %v with bf16 products, %v in float32", small, name, j, got[0][j], got[1][j])
				}
			}
		}
	}
}

// batchedDims are the sizes of TestBF16Batched's products.
type batchedDims struct{ batch, lq, lk, heads, dk int }

// program compiles the product on new parameters in precision prec, their values
// rounded to bfloat16 when round is set, with r set.
func (d batchedDims) program(t *testing.T, prec Precision, round bool) *Program {
	t.Helper()
	params := newTestParams(t, tensor.Float32)
	s := NewScope(params)
	a, b := s.Param("a", tensor.Shape{d.batch, d.heads, d.lq, d.dk}, Normal(1)), s.Param("b", tensor.Shape{d.batch, d.heads, d.lk, d.dk}, Normal(1))
	y := s.BatchedMatMul(a, b, false, true)
	r := s.Input("r", tensor.Float32, y.Shape()...)
	loss := s.Sum(s.Reshape(s.Mul(y, r), y.Shape().TotalSize()), 0, false)
	p, err := Compile(newTestRuntime(t, prec), s, loss, map[string]*G.Node{"y": y})
	if err != nil {
		t.Fatal(err)
	}
	rs := make([]float32, y.Shape().TotalSize())
	rng := newTestRNG(9)
	for j := range rs {
		rs[j] = blas.RoundBF16(float32(rng.NormFloat64()))
	}
	if err := p.Set("r", rs); err != nil {
		t.Fatal(err)
	}
	if round { // the same values as the BF16 store's, rounded
		for _, name := range []string{"a", "b"} {
			v := params.Value(name).Float32s()
			for j := range v {
				v[j] = blas.RoundBF16(v[j])
			}
		}
	}
	return p
}
