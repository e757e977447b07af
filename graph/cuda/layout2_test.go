package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/transformer-go/transformer/graph"
)

// testMaxAxis checks max_axis_f32 and its gradient, ties and a NaN among
// the inputs.
func testMaxAxis(e *env) {
	r := rand.New(rand.NewPCG(16, 1))
	for _, s := range [][3]int{{1, 1, 1}, {3, 5, 7}, {2, 300, 3}} { // outer, n, inner
		o, n, in := s[0], s[1], s[2]
		x, dy := randn(r, o*n*in, 1), randn(r, o*in, 1)
		for i := range x {
			x[i] = float32(math.Round(float64(x[i]) * 4)) // ties
		}
		if len(x) > 1 {
			x[len(x)/2] = float32(math.NaN())
		}
		px, pdy, py, pdx := e.upload(x), e.upload(dy), e.alloc(o*in), e.alloc(o*n*in)
		e.launch("max_axis_f32", 2, 64, py, px, o, n, in)
		e.launch("max_axis_bwd_f32", 2, 64, pdx, px, py, pdy, o, n, in)
		y, dx := make([]float64, o*in), make([]float64, o*n*in)
		for j := range y {
			at := func(a int) int { return (j/in*n+a)*in + j%in }
			y[j] = float64(x[at(0)])
			for a := 1; a < n; a++ {
				if v := float64(x[at(a)]); v > y[j] || math.IsNaN(v) {
					y[j] = v
				}
			}
			for a := range n {
				if float64(x[at(a)]) == y[j] {
					dx[at(a)] = float64(dy[j])
					break
				}
			}
		}
		what := fmt.Sprintf("max over [%d, %d, %d]", o, n, in)
		near(e.t, what, e.download(py, o*in), y, e.d.tol)
		near(e.t, what+" gradient", e.download(pdx, o*n*in), dx, e.d.tol)
	}
}

// testSlicing checks slice_axis_f32, place_axis_f32 and permute_f32.
func testSlicing(e *env) {
	r := rand.New(rand.NewPCG(17, 1))
	for _, s := range [][5]int{{1, 1, 1, 0, 1}, {3, 10, 7, 2, 5}, {2, 9, 1, 8, 1}} { // outer, n, inner, start, len
		o, n, in, start, ln := s[0], s[1], s[2], s[3], s[4]
		x := randn(r, o*n*in, 1)
		px, py, pz := e.upload(x), e.alloc(o*ln*in), e.upload(make([]float32, o*n*in))
		e.launch("slice_axis_f32", 2, 64, py, px, o, n, in, start, ln)
		e.launch("place_axis_f32", 2, 64, pz, py, o, n, in, start, ln)
		y, z := make([]float64, o*ln*in), make([]float64, o*n*in)
		for i, v := range x {
			if a := i / in % n; a >= start && a < start+ln {
				y[(i/in/n*ln+a-start)*in+i%in] = float64(v)
				z[i] = float64(v)
			}
		}
		what := fmt.Sprintf("slice [%d, %d, %d] at %d:%d", o, n, in, start, start+ln)
		near(e.t, what, e.download(py, o*ln*in), y, e.d.tol)
		near(e.t, what+" placed back", e.download(pz, o*n*in), z, e.d.tol)
	}
	for _, c := range []struct{ shape, perm []int }{{[]int{5}, []int{0}}, {[]int{2, 3, 4, 5}, []int{0, 2, 1, 3}}, {[]int{3, 7, 2}, []int{2, 0, 1}}} {
		layout, n, err := graph.PermuteLayout(c.shape, c.perm)
		if err != nil {
			e.t.Fatal(err)
		}
		x := randn(r, n, 1)
		px, py, pl := e.upload(x), e.alloc(n), e.uploadInts(layout)
		e.launch("permute_f32", 2, 64, py, px, pl, len(c.shape), n)
		want := make([]float64, n)
		for i, v := range x { // x's element i is y's element at its permuted index
			idx, rem := make([]int, len(c.shape)), i
			for k := len(c.shape) - 1; k >= 0; k-- {
				idx[k], rem = rem%c.shape[k], rem/c.shape[k]
			}
			at := 0
			for _, p := range c.perm {
				at = at*c.shape[p] + idx[p]
			}
			want[at] = float64(v)
		}
		near(e.t, fmt.Sprintf("permute %v by %v", c.shape, c.perm), e.download(py, n), want, e.d.tol)
	}
}

// testSlot checks set_slot_f32 (into a copy and in place) and slot_grad_f32.
func testSlot(e *env) {
	r := rand.New(rand.NewPCG(18, 1))
	for _, s := range [][4]int{{1, 1, 1, 0}, {6, 5, 8, 3}, {2, 7, 33, 6}} { // lead, maxLen, d, slot
		lead, maxLen, d, t := s[0], s[1], s[2], s[3]
		cache, x, dy := randn(r, lead*maxLen*d, 1), randn(r, lead*d, 1), randn(r, lead*maxLen*d, 1)
		pc, px, pdy, ps := e.upload(cache), e.upload(x), e.upload(dy), e.uploadInts([]int32{int32(t)})
		py, pdc, pdx := e.alloc(len(cache)), e.alloc(len(cache)), e.alloc(len(x))
		y, dc, dx := f64(cache), f64(dy), make([]float64, len(x))
		for l := range lead {
			for j := range d {
				y[(l*maxLen+t)*d+j] = float64(x[l*d+j])
				dc[(l*maxLen+t)*d+j] = 0
				dx[l*d+j] = float64(dy[(l*maxLen+t)*d+j])
			}
		}
		what := fmt.Sprintf("slot %d of [%d, %d, %d]", t, lead, maxLen, d)
		e.launch("set_slot_f32", 2, 64, py, pc, px, ps, lead, maxLen, d)
		near(e.t, what, e.download(py, len(cache)), y, e.d.tol)
		e.launch("set_slot_f32", 2, 64, pc, pc, px, ps, lead, maxLen, d)
		near(e.t, what+" in place", e.download(pc, len(cache)), y, e.d.tol)
		e.launch("slot_grad_f32", 2, 64, pdc, pdy, ps, lead, maxLen, d, 1)
		e.launch("slot_grad_f32", 2, 64, pdx, pdy, ps, lead, maxLen, d, 0)
		near(e.t, what+" cache gradient", e.download(pdc, len(cache)), dc, e.d.tol)
		near(e.t, what+" x gradient", e.download(pdx, len(x)), dx, e.d.tol)
	}
}

// testTargetScores checks target_scores_f32 with ties for the best token.
func testTargetScores(e *env) {
	r := rand.New(rand.NewPCG(19, 1))
	const pad = 1
	for _, s := range rowShapes {
		rows, vocab := s[0], max(s[1], 2)
		x, targets := randn(r, rows*vocab, 1), make([]int32, rows)
		for i := range x {
			x[i] = float32(math.Round(float64(x[i]) * 2)) // ties at the top
		}
		for i := range targets {
			targets[i] = int32(r.IntN(vocab))
		}
		row0 := x[:vocab]
		targets[0] = int32(slicesIndexMax(row0)) // a best token, the first of its ties
		want := make([]float64, 2*rows)
		for i, t := range targets {
			if t == pad {
				continue
			}
			row := f64(x[i*vocab : (i+1)*vocab])
			want[2*i] = softmaxRef(row, 1, vocab, true)[t]
			if slicesIndexMax(x[i*vocab:(i+1)*vocab]) == int(t) {
				want[2*i+1] = 1
			}
		}
		px, pt, ps := e.upload(x), e.uploadInts(targets), e.alloc(2*rows)
		e.launch("target_scores_f32", min(rows, 2), 128, ps, px, pt, rows, vocab, pad)
		near(e.t, fmt.Sprintf("target scores %dx%d", rows, vocab), e.download(ps, 2*rows), want, e.d.tol)
	}
}

// slicesIndexMax is the first index of x's largest element.
func slicesIndexMax(x []float32) int {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return best
}

func TestPermuteLayout(t *testing.T) {
	l, n, err := graph.PermuteLayout([]int{2, 3, 4}, []int{2, 0, 1})
	if want := []int32{4, 2, 3, 1, 12, 4}; err != nil || n != 24 || fmt.Sprint(l) != fmt.Sprint(want) {
		t.Errorf("PermuteLayout([2 3 4], [2 0 1]) = %v, %d, %v; want %v, 24", l, n, err, want)
	}
	for _, perm := range [][]int{{0, 1}, {0, 0, 1}, {0, 1, 3}} {
		_, _, err := graph.PermuteLayout([]int{2, 3, 4}, perm)
		if err == nil {
			t.Errorf("PermuteLayout([2 3 4], %v) succeeded", perm)
		}
	}
}
