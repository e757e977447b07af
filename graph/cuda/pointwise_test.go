package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/transformer-go/transformer/graph"
)

// testPointwise checks pointwise.cu's functions and gradients; a gradient
// that reads y is given the device's own forward output, as a program would.
func testPointwise(e *env) {
	r := rand.New(rand.NewPCG(14, 1))
	sigmoid := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	phi := func(x float64) float64 { return 0.5 * (1 + math.Erf(x/math.Sqrt2)) }
	for _, f := range []struct {
		name     string
		positive bool // only x > 0 is in the domain
		fromY    bool
		differs  bool // f' is a difference of terms up to 1 (1 - y², y - y²)
		fwd      func(x float64) float64
		grad     func(v float64) float64 // f' in terms of x, or of y when fromY
	}{
		{"exp", false, true, false, math.Exp, func(y float64) float64 { return y }},
		{"log", true, false, false, math.Log, func(x float64) float64 { return 1 / x }},
		{"sqrt", true, true, false, math.Sqrt, func(y float64) float64 { return 1 / (2 * y) }},
		{"tanh", false, true, true, math.Tanh, func(y float64) float64 { return 1 - y*y }},
		{"sigmoid", false, true, true, sigmoid, func(y float64) float64 { return y * (1 - y) }},
		{"silu", false, false, false, func(x float64) float64 { return x * sigmoid(x) }, func(x float64) float64 {
			return sigmoid(x) * (1 + x*(1-sigmoid(x)))
		}},
		{"gelu", false, false, false, func(x float64) float64 { return x * phi(x) }, func(x float64) float64 {
			return phi(x) + x*math.Exp(-x*x/2)/math.Sqrt(2*math.Pi)
		}},
	} {
		for _, n := range sizes {
			x, dy := randn(r, n, 2), randn(r, n, 1)
			if f.positive {
				for i := range x {
					x[i] = float32(math.Abs(float64(x[i])) + 0.1)
				}
			}
			px, pdy, py, pdx := e.upload(x), e.upload(dy), e.alloc(n), e.alloc(n)
			e.launch(f.name+"_fwd_f32", 3, 128, py, px, n)
			y, want := e.download(py, n), make([]float64, n)
			for i, v := range x {
				want[i] = f.fwd(float64(v))
			}
			what := fmt.Sprintf("%s n=%d", f.name, n)
			near(e.t, what, y, want, e.d.tol)
			pv, v := px, x
			if f.fromY {
				pv, v = py, y
			}
			e.launch(f.name+"_bwd_f32", 3, 128, pdx, pv, pdy, n)
			var terms []float64
			for i := range want {
				want[i] = float64(dy[i]) * f.grad(float64(v[i]))
				if f.differs {
					terms = append(terms, math.Abs(float64(dy[i])))
				}
			}
			nearTerms(e.t, what+" gradient", e.download(pdx, n), want, terms, e.d.tol)
		}
	}
}

// testBroadcast checks bcast.cu's four operations and their gradients on
// operands that broadcast along leading, trailing and inner axes.
func testBroadcast(e *env) {
	r := rand.New(rand.NewPCG(15, 1))
	for _, s := range [][2][]int{{{2, 3, 4}, {2, 3, 4}}, {{2, 3, 4}, {3, 1}}, {{5, 1}, {1, 7}}, {{1}, {6, 5}}, {{4, 1, 300}, {4, 3, 1}}} {
		layout, n, err := graph.BroadcastLayout(s[0], s[1])
		if err != nil {
			e.t.Fatal(err)
		}
		na, nb := prod(s[0]), prod(s[1])
		a, b, dy := randn(r, na, 1), randn(r, nb, 1), randn(r, n, 1)
		for i := range b {
			b[i] += float32(math.Copysign(0.5, float64(b[i]))) // away from 0, for division
		}
		pa, pb, pdy, py, pda, pdb := e.upload(a), e.upload(b), e.upload(dy), e.alloc(n), e.alloc(na), e.alloc(nb)
		pl := e.uploadInts(layout)
		rank := len(layout) / 3
		for op, name := range []string{"add", "sub", "mul", "div"} {
			e.launch("bcast_f32", 3, 128, py, pa, pb, pl, rank, n, op)
			e.launch("bcast_bwd_f32", 3, 128, pda, pa, pb, pdy, pl, rank, n, na, op, 0)
			e.launch("bcast_bwd_f32", 3, 128, pdb, pa, pb, pdy, pl, rank, n, nb, op, 1)
			y, da, db := make([]float64, n), make([]float64, na), make([]float64, nb)
			for i := range y {
				ia, ib := bcastIndex(i, s[0], s[1], layout)
				u, v, g := float64(a[ia]), float64(b[ib]), float64(dy[i])
				ga, gb := []float64{g, g, g * v, g / v}[op], []float64{g, -g, g * u, -g * u / (v * v)}[op]
				y[i] = []float64{u + v, u - v, u * v, u / v}[op]
				da[ia] += ga
				db[ib] += gb
			}
			what := fmt.Sprintf("%s %v %v", name, s[0], s[1])
			near(e.t, what, e.download(py, n), y, e.d.tol)
			near(e.t, what+" da", e.download(pda, na), da, e.d.tol)
			near(e.t, what+" db", e.download(pdb, nb), db, e.d.tol)
		}
	}
}

// bcastIndex is the elements of a and b under the output's element i,
// computed from the shapes (not from the layout's strides).
func bcastIndex(i int, a, b []int, layout []int32) (ia, ib int) {
	rank := len(layout) / 3
	sa, sb := 1, 1
	for k := rank - 1; k >= 0; k-- {
		j := i % int(layout[k])
		i /= int(layout[k])
		da, db := dimAt(a, rank-1-k), dimAt(b, rank-1-k)
		ia += j % da * sa
		ib += j % db * sb
		sa, sb = sa*da, sb*db
	}
	return ia, ib
}

func prod(s []int) int {
	n := 1
	for _, d := range s {
		n *= d
	}
	return n
}

func TestBroadcastLayout(t *testing.T) {
	l, n, err := graph.BroadcastLayout([]int{2, 3, 4}, []int{3, 1})
	want := []int32{2, 3, 4, 12, 4, 1, 0, 1, 0}
	if err != nil || n != 24 || fmt.Sprint(l) != fmt.Sprint(want) {
		t.Errorf("BroadcastLayout([2 3 4], [3 1]) = %v, %d, %v; want %v, 24", l, n, err, want)
	}
	_, _, err = graph.BroadcastLayout([]int{2, 3}, []int{4})
	contains(t, err, "shapes [2 3] and [4] do not broadcast (axis -1: 3 against 4)")
	_, _, err = graph.BroadcastLayout([]int{1 << 20}, []int{1 << 12, 1})
	contains(t, err, "more than 2^31 elements")
}

// dimAt is the size of s's axis k places before the last (1 if none).
func dimAt(s []int, k int) int {
	if k >= len(s) {
		return 1
	}
	return s[len(s)-1-k]
}
