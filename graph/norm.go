package graph

import (
	"fmt"
	"math"

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
	return normalize(x, g, nil, eps, center)
}

// LayerNorm is layer normalization with gain g and bias b in one op:
// y = g ⊙ x̂ + b, x̂ as in Normalize with center.
func LayerNorm(x, g, b *G.Node, eps float64) (*G.Node, error) { return normalize(x, g, b, eps, true) }

// normalize is Normalize plus the bias b unless it is nil.
func normalize(x, g, b *G.Node, eps float64, center bool) (*G.Node, error) {
	if x == nil || g == nil {
		return nil, errors.New("normalize: no input or no gain")
	}
	if g.Dims() != 1 || g.Shape()[0] != lastDim(x.Shape()) {
		return nil, errors.Errorf("normalize: x %v with gain %v: gain must be a vector of x's last size", x.Shape(), g.Shape())
	}
	op := Op{
		Name:   fmt.Sprintf("normalize(eps=%g,center=%t)", eps, center),
		Arity:  2,
		Shape:  firstShape,
		F32:    normalizeKernels[float32](eps, center),
		F64:    normalizeKernels[float64](eps, center),
		Device: normalizeDevice(eps, center),
		Diff:   []bool{true, true},
		Save:   []int{0, 1},
	}
	if b == nil {
		return op.Apply(x, g)
	}
	if b.Dims() != 1 || b.Shape()[0] != lastDim(x.Shape()) {
		return nil, errors.Errorf("layer norm: x %v with bias %v: bias must be a vector of x's last size", x.Shape(), b.Shape())
	}
	op.Name, op.Arity, op.Diff = fmt.Sprintf("layer_norm(eps=%g)", eps), 3, []bool{true, true, true}
	return op.Apply(x, g, b)
}

// normalizeKernels are Normalize's kernels, and LayerNorm's with the bias
// b as a third input. With d = g ⊙ dy and r the row's 1/sqrt(σ² + eps), the
// backward pass is
//
//	dx = r · (d - mean(d) - x̂ · mean(d ⊙ x̂))   (the mean(d) term only when centered)
//	dg = Σ_rows dy ⊙ x̂
//	db = Σ_rows dy
func normalizeKernels[T Float](eps float64, center bool) Kernels[T] {
	return Kernels[T]{
		Forward: func(y Operand[T], in []Operand[T]) error {
			var b []T
			if len(in) == 3 {
				b = in[2].Data
			}
			normalizeRows(y.Data, in[0].Data, in[1].Data, b, eps, center)
			return nil
		},
		Backward: func(i int, d Operand[T], in []Operand[T], _, dy Operand[T]) error {
			switch i {
			case 2:
				columnSums(d.Data, dy.Data)
			case 1:
				gainGrad(d.Data, in[0].Data, dy.Data, eps, center)
			default:
				normalizeBackward(d.Data, in[0].Data, in[1].Data, dy.Data, eps, center)
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

// normalizeRows writes y = g ⊙ x̂ (+ b, unless nil) row by row.
func normalizeRows[T Float](y, x, g, b []T, eps float64, center bool) {
	n := len(g)
	forRows(x, n, func(lo, hi int) {
		for r := lo * n; r < hi*n; r += n {
			xr, yr := x[r:r+n], y[r:r+n]
			mean, rstd := rowStats(xr, eps, center)
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

// normalizeBackward writes the gradient of x into out.
func normalizeBackward[T Float](out, x, g, dy []T, eps float64, center bool) {
	n := len(g)
	forRows(x, n, func(lo, hi int) {
		for r := lo * n; r < hi*n; r += n {
			xr, dyr := x[r:r+n], dy[r:r+n]
			mean, rstd := rowStats(xr, eps, center)
			md, mdx := gradMoments(xr, g, dyr, mean)
			md /= float64(n)
			mdx *= rstd / float64(n)
			if !center {
				md = 0
			}
			or := out[r : r+n]
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

// gainGrad writes dg = Σ_rows dy ⊙ x̂, each row's statistics computed as it
// is summed.
func gainGrad[T Float](dg, x, dy []T, eps float64, center bool) {
	n := len(dg)
	sumOverRows(dg, len(x)/n, func(out []T, r int) {
		xr, dyr := x[r*n:(r+1)*n], dy[r*n:(r+1)*n]
		mean, rstd := rowStats(xr, eps, center)
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
	sumOverRows(s, len(x)/n, func(out []T, r int) { addInto(out, x[r*n:(r+1)*n]) })
}

// sumRowsChunk is how many rows sumOverRows sums into one partial sum.
const sumRowsChunk = 64

// sumOverRows writes into s the sum over rows of terms, add(out, r)
// adding row r's terms into out (as long as s). Chunks of sumRowsChunk
// rows are summed in parallel, each in order into a partial sum of its
// own, and the partial sums are then added in chunk order: every goroutine
// reads whole rows, and the result does not depend on how many goroutines
// there are.
func sumOverRows[T Float](s []T, rows int, add func(out []T, r int)) {
	n, chunks := len(s), (rows+sumRowsChunk-1)/sumRowsChunk
	if chunks <= 1 {
		clear(s)
		for r := range rows {
			add(s, r)
		}
		return
	}
	buf := getScratch[T](chunks * n)
	defer scratch.Put(buf)
	part := *buf
	forElems(chunks, sumRowsChunk*n, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			out := part[c*n : (c+1)*n]
			clear(out)
			for r := c * sumRowsChunk; r < min((c+1)*sumRowsChunk, rows); r++ {
				add(out, r)
			}
		}
	})
	forElems(n, chunks, func(j0, j1 int) {
		copy(s[j0:j1], part[j0:j1])
		for c := 1; c < chunks; c++ {
			addInto(s[j0:j1], part[c*n+j0:c*n+j1])
		}
	})
}
