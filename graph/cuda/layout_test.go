package cuda

import (
	"fmt"
	"math/rand/v2"
)

// testLayout checks the kernels of layout.cu: heads split and merged (each
// the other's inverse), positions added and their gradient, and sums and
// means over an axis with their gradient.
func testLayout(e *env) {
	r := rand.New(rand.NewPCG(12, 1))
	for _, s := range [][4]int{{1, 1, 1, 1}, {2, 3, 5, 7}, {3, 4, 33, 16}} { // batch, heads, len, dk
		b, h, n, dk := s[0], s[1], s[2], s[3]
		size := b * h * n * dk
		x := randn(r, size, 1)
		px, py, pz := e.upload(x), e.alloc(size), e.alloc(size)
		e.launch("heads_f32", 3, 64, py, px, b, h, n, dk, 1)
		split := make([]float64, size)
		for i := range split {
			bi, ti, hi, ki := i/(n*h*dk), i/(h*dk)%n, i/dk%h, i%dk // x is token-major
			split[((bi*h+hi)*n+ti)*dk+ki] = float64(x[i])
		}
		what := fmt.Sprintf("heads %dx%dx%dx%d", b, h, n, dk)
		near(e.t, what+" split", e.download(py, size), split, e.d.tol)
		e.launch("heads_f32", 3, 64, pz, py, b, h, n, dk, 0)
		near(e.t, what+" merged back", e.download(pz, size), f64(x), e.d.tol)
	}
	for _, s := range [][3]int{{1, 1, 1}, {3, 5, 7}, {4, 33, 65}} { // batch, len, d with maxLen = len + 2
		b, n, d := s[0], s[1], s[2]
		per, total := n*d, (n+2)*d
		x, pe, dy := randn(r, b*per, 1), randn(r, total, 1), randn(r, b*per, 1)
		px, ppe, pdy, py, pdpe := e.upload(x), e.upload(pe), e.upload(dy), e.alloc(b*per), e.alloc(total)
		e.launch("add_positions_f32", 2, 64, py, px, ppe, b*per, per)
		e.launch("positions_grad_f32", 2, 64, pdpe, pdy, b, per, total)
		y, dpe := make([]float64, b*per), make([]float64, total)
		for i := range y {
			y[i] = float64(x[i]) + float64(pe[i%per])
			dpe[i%per] += float64(dy[i])
		}
		what := fmt.Sprintf("positions %dx%dx%d", b, n, d)
		near(e.t, what, e.download(py, b*per), y, e.d.tol)
		near(e.t, what+" gradient", e.download(pdpe, total), dpe, e.d.tol)
	}
	for _, s := range [][3]int{{1, 1, 1}, {1, 7, 300}, {5, 9, 1}, {3, 17, 13}} { // outer, n, inner
		o, n, in := s[0], s[1], s[2]
		x, dy := randn(r, o*n*in, 1), randn(r, o*in, 1)
		px, pdy, py, pdx := e.upload(x), e.upload(dy), e.alloc(o*in), e.alloc(o*n*in)
		scale := 1 / float32(n) // a mean
		e.launch("sum_axis_f32", 2, 64, py, px, o, n, in, scale)
		e.launch("spread_axis_f32", 2, 64, pdx, pdy, o, n, in, scale)
		y, dx := make([]float64, o*in), make([]float64, o*n*in)
		for i, v := range x {
			j := i/(n*in)*in + i%in
			y[j] += float64(scale) * float64(v)
			dx[i] = float64(scale) * float64(dy[j])
		}
		what := fmt.Sprintf("mean over [%d, %d, %d]", o, n, in)
		near(e.t, what, e.download(py, o*in), y, e.d.tol)
		near(e.t, what+" gradient", e.download(pdx, o*n*in), dx, e.d.tol)
	}
}
