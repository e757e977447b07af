package graph

import (
	"fmt"
	"math"
	"slices"

	"github.com/pkg/errors"
	"github.com/transformer-go/transformer/graph/internal/vrow"
	G "gorgonia.org/gorgonia"
)

// Normalize scales each row (last axis) of x to unit variance and multiplies it by
// the gain g. With center, it is layer normalization without its bias
// (Ba et al., 2016):
//
//	x̂ = (x - μ) / sqrt(σ² + eps),  y = g ⊙ x̂     (μ, σ² the row's mean and biased variance)
//
// Without center, it is RMSNorm (Zhang & Sennrich, 2019):
//
//	x̂ = x / sqrt(mean(x²) + eps),  y = g ⊙ x̂
//
// LayerNorm adds the bias for the full LayerNorm in the same pass.
func Normalize(x, g *G.Node, eps float64, center bool) (*G.Node, error) {
	return normalize(x, nil, g, nil, eps, center)
}

// LayerNorm is layer normalization with gain g and bias b in one op:
// y = g ⊙ x̂ + b, x̂ as in Normalize with center.
func LayerNorm(x, g, b *G.Node, eps float64) (*G.Node, error) {
	return normalize(x, nil, g, b, eps, true)
}

// AddNormalize is Normalize of the sum x + r, the post-norm residual
// connection's Norm(x + r), in one op that never writes the sum out. It
// gives Normalize(Add(x, r), …) bit for bit; both addends get the sum's
// gradient.
func AddNormalize(x, r, g *G.Node, eps float64, center bool) (*G.Node, error) {
	return normalize(x, r, g, nil, eps, center)
}

// AddLayerNorm is LayerNorm of the sum x + r in one op, as AddNormalize.
func AddLayerNorm(x, r, g, b *G.Node, eps float64) (*G.Node, error) {
	return normalize(x, r, g, b, eps, true)
}

// normalize is Normalize of x, or of x + r unless r is nil, plus the bias
// b unless it is nil. The op's inputs are x, r (when not nil), g, b (when
// not nil).
func normalize(x, r, g, b *G.Node, eps float64, center bool) (*G.Node, error) {
	if x == nil || g == nil {
		return nil, errors.New("normalize: no input or no gain")
	}
	if g.Dims() != 1 || g.Shape()[0] != lastDim(x.Shape()) {
		return nil, errors.Errorf("normalize: x %v with gain %v: gain must be a vector of x's last size", x.Shape(), g.Shape())
	}
	if b != nil && (b.Dims() != 1 || b.Shape()[0] != lastDim(x.Shape())) {
		return nil, errors.Errorf("layer norm: x %v with bias %v: bias must be a vector of x's last size", x.Shape(), b.Shape())
	}
	if r != nil && !slices.Equal(r.Shape(), x.Shape()) {
		return nil, errors.Errorf("normalize: x %v plus %v: the addends must have one shape", x.Shape(), r.Shape())
	}
	in := slices.DeleteFunc([]*G.Node{x, r, g, b}, func(n *G.Node) bool { return n == nil })
	f := normForm{eps: eps, center: center, sum: r != nil}
	name := fmt.Sprintf("normalize(eps=%g,center=%t)", eps, center)
	if b != nil {
		name = fmt.Sprintf("layer_norm(eps=%g)", eps)
	}
	if f.sum {
		name = "add_" + name
	}
	op := Op{
		Name:   name,
		Arity:  len(in),
		Shape:  firstShape,
		F32:    normalizeKernels[float32](f),
		F64:    normalizeKernels[float64](f),
		Device: normalizeDevice(f),
		ONNX:   normalizeONNX(f),
		Diff:   slices.Repeat([]bool{true}, len(in)),
		Save:   []int{0, 1},
	}
	if f.sum {
		op.Save, op.Grad = []int{0, 1, 2}, sumGrads
	}
	return op.Apply(in...)
}

// sumGrads is the Grad of the sum form's op: the nodes that running its
// Backward kernels takes (kernelOp.gradOp, on x, r, g and dy), but one for
// the sum's gradient, which both addends take, so that it is computed once.
func sumGrads(in G.Nodes, out, dy *G.Node) (G.Nodes, error) {
	k, ok := out.Op().(*kernelOp)
	if !ok {
		return nil, errors.Errorf("normalizing a sum: the output's op is %T", out.Op())
	}
	grads := make(G.Nodes, len(in))
	for i := range in {
		if i == 1 {
			grads[1] = grads[0]
			continue
		}
		g, err := k.gradOp(i).Apply(in[0], in[1], in[2], dy)
		if err != nil {
			return nil, err
		}
		grads[i] = g
	}
	return grads, nil
}

// normForm is what a normalizing op computes: its eps, whether it centers
// the rows, and whether it normalizes the sum of its first two inputs.
type normForm struct {
	eps         float64
	center, sum bool
}

// firstParam is the index of the gain among the op's inputs.
func (f normForm) firstParam() int {
	if f.sum {
		return 2
	}
	return 1
}

// normInputs are the rows x, the addend r (nil unless f.sum), the gain g and
// the bias b (nil if none) among a normalizing op's inputs.
func normInputs[T Float](f normForm, in []Operand[T]) (x, r, g, b []T) {
	p := f.firstParam()
	x, g = in[0].Data, in[p].Data
	if f.sum {
		r = in[1].Data
	}
	if len(in) > p+1 {
		b = in[p+1].Data
	}
	return x, r, g, b
}

// normalizeKernels are the kernels of a normalizing op of the form f. With
// d = g ⊙ dy and r the row's 1/sqrt(σ² + eps), the backward pass is
//
//	dx = r · (d - mean(d) - x̂ · mean(d ⊙ x̂))   (the mean(d) term only when centered)
//	dg = Σ_rows dy ⊙ x̂
//	db = Σ_rows dy
//
// and an addend's gradient is the sum's, dx.
func normalizeKernels[T Float](f normForm) Kernels[T] {
	return Kernels[T]{
		Forward: func(y Operand[T], in []Operand[T]) error {
			x, r, g, b := normInputs(f, in)
			normalizeRows(y.Data, x, r, g, b, f)
			return nil
		},
		Backward: func(i int, d Operand[T], in []Operand[T], _, dy Operand[T]) error {
			x, r, g, _ := normInputs(f, in)
			switch i - f.firstParam() {
			case 1:
				columnSums(d.Data, dy.Data)
			case 0:
				gainGrad(d.Data, x, r, dy.Data, f)
			default:
				normalizeBackward(d.Data, x, r, g, dy.Data, f)
			}
			return nil
		},
	}
}

// rowStats returns the row's mean (0 unless center) and 1/sqrt(variance + eps).
func rowStats[T Float](x []T, eps float64, center bool) (mean, rstd float64) {
	if center {
		mean = RowSum(x) / float64(len(x))
	}
	return mean, 1 / math.Sqrt(squaresAbout(x, mean)/float64(len(x))+eps)
}

// squaresAbout is Σ (x - c)² in float64: float32 rows with vrow's vector
// kernels, others in four interleaved partial sums so that the additions
// do not wait on one another.
func squaresAbout[T Float](x []T, c float64) float64 {
	if x32, ok := any(x).([]float32); ok {
		return vrow.SquaresAbout(x32, c)
	}
	var s0, s1, s2, s3 float64
	n := len(x) &^ 3
	for j := 0; j < n; j += 4 {
		d0, d1, d2, d3 := float64(x[j])-c, float64(x[j+1])-c, float64(x[j+2])-c, float64(x[j+3])-c
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
	}
	for _, v := range x[n:] {
		d := float64(v) - c
		s0 += d * d
	}
	return (s0 + s1) + (s2 + s3)
}

// gradMoments returns Σ d and Σ d·(x - c), d = g ⊙ dy, in float64, in two
// interleaved partial sums each (float32 rows: with vrow's kernels).
func gradMoments[T Float](x, g, dy []T, c float64) (sd, sdx float64) {
	if x32, ok := any(x).([]float32); ok {
		g32, dy32 := any(g).([]float32), any(dy).([]float32)
		return vrow.Dot(g32, dy32), vrow.DotAbout(g32, dy32, x32, c)
	}
	var a0, a1, b0, b1 float64
	n := len(x) &^ 1
	for j := 0; j < n; j += 2 {
		d0, d1 := float64(g[j]*dy[j]), float64(g[j+1]*dy[j+1])
		a0 += d0
		a1 += d1
		b0 += d0 * (float64(x[j]) - c)
		b1 += d1 * (float64(x[j+1]) - c)
	}
	for j := n; j < len(x); j++ {
		d := float64(g[j] * dy[j])
		a0 += d
		b0 += d * (float64(x[j]) - c)
	}
	return a0 + a1, b0 + b1
}

// normalizeRows writes y = g ⊙ x̂ (+ b, unless nil) row by row, x̂ that of
// x's row, or of x + r's written into y first unless r is nil.
func normalizeRows[T Float](y, x, r, g, b []T, f normForm) {
	n := len(g)
	forRows(x, n, func(lo, hi int) {
		for i := lo * n; i < hi*n; i += n {
			xr, yr := rowOf(x, r, i, n, y[i:i+n]), y[i:i+n]
			mean, rstd := rowStats(xr, f.eps, f.center)
			if x32, ok := any(xr).([]float32); ok {
				b32, _ := any(b).([]float32)
				vrow.Normalize(any(yr).([]float32), x32, any(g).([]float32), b32, mean, rstd)
				continue
			}
			for j, v := range xr {
				yr[j] = g[j] * T((float64(v)-mean)*rstd)
			}
			if b != nil {
				for j, v := range b {
					yr[j] += v
				}
			}
		}
	})
}

// rowOf is the row of n elements at offset i of x, or, unless r is nil,
// that of x + r written into buf.
func rowOf[T Float](x, r []T, i, n int, buf []T) []T {
	if r == nil {
		return x[i : i+n]
	}
	AddRow(buf, x[i:i+n], r[i:i+n])
	return buf
}

// normalizeBackward writes the gradient of x (or of x + r) into out.
func normalizeBackward[T Float](out, x, r, g, dy []T, f normForm) {
	n := len(g)
	forRows(x, n, func(lo, hi int) {
		for i := lo * n; i < hi*n; i += n {
			or, dyr := out[i:i+n], dy[i:i+n]
			xr := rowOf(x, r, i, n, or)
			mean, rstd := rowStats(xr, f.eps, f.center)
			md, mdx := gradMoments(xr, g, dyr, mean)
			md /= float64(n)
			mdx *= rstd / float64(n)
			if !f.center {
				md = 0
			}
			if x32, ok := any(xr).([]float32); ok {
				vrow.NormalizeGrad(any(or).([]float32), x32, any(g).([]float32), any(dyr).([]float32), mean, rstd, md, mdx)
				continue
			}
			for j, v := range xr {
				xh := (float64(v) - mean) * rstd
				or[j] = T(rstd * (float64(g[j]*dyr[j]) - md - xh*mdx))
			}
		}
	})
}

// gainGrad writes dg = Σ_rows dy ⊙ x̂, each row's statistics (of x, or of
// x + r unless r is nil) computed as it is summed.
func gainGrad[T Float](dg, x, r, dy []T, f normForm) {
	n := len(dg)
	sumOverRows(dg, len(x)/n, func(out, tmp []T, i int) {
		xr, dyr := rowOf(x, r, i*n, n, tmp), dy[i*n:(i+1)*n]
		mean, rstd := rowStats(xr, f.eps, f.center)
		if x32, ok := any(xr).([]float32); ok {
			o := any(out).([]float32)
			vrow.Normalize(o, x32, any(dyr).([]float32), o, mean, rstd)
			return
		}
		for j, v := range xr {
			out[j] += dyr[j] * T((float64(v)-mean)*rstd)
		}
	})
}

// columnSums writes s[j] = Σ_rows x[r, j] for x of rows of len(s).
func columnSums[T Float](s, x []T) {
	n := len(s)
	sumOverRows(s, len(x)/n, func(out, _ []T, r int) { addInto(out, x[r*n:(r+1)*n]) })
}

// sumRowsChunk is how many rows sumOverRows sums into one partial sum.
const sumRowsChunk = 64

// sumOverRows writes into s the sum over rows of terms, add(out, tmp, r)
// adding row r's terms into out (as long as s), with tmp a row of scratch
// memory of the same length. Chunks of sumRowsChunk rows are summed in
// parallel, each in order into a partial sum of its own, and the partial
// sums are then added in chunk order: every goroutine reads whole rows, and
// the result does not depend on how many goroutines there are.
func sumOverRows[T Float](s []T, rows int, add func(out, tmp []T, r int)) {
	n, chunks := len(s), max((rows+sumRowsChunk-1)/sumRowsChunk, 1)
	buf := getScratch[T]((2*chunks - 1) * n)
	defer scratch.Put(buf)
	part, tmp := (*buf)[:(chunks-1)*n], (*buf)[(chunks-1)*n:]
	if chunks == 1 {
		clear(s)
		for r := range rows {
			add(s, tmp[:n], r)
		}
		return
	}
	forElems(chunks, sumRowsChunk*n, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			out := s
			if c > 0 {
				out = part[(c-1)*n : c*n]
			}
			clear(out)
			for r := c * sumRowsChunk; r < min((c+1)*sumRowsChunk, rows); r++ {
				add(out, tmp[c*n:(c+1)*n], r)
			}
		}
	})
	forElems(n, chunks, func(j0, j1 int) {
		for c := 1; c < chunks; c++ {
			addInto(s[j0:j1], part[(c-1)*n+j0:(c-1)*n+j1])
		}
	})
}
