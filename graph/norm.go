package graph

import (
	"fmt"
	"math"

	"github.com/pkg/errors"
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
// Add a bias with AddBias for the full LayerNorm.
func Normalize(x, g *G.Node, eps float64, center bool) (*G.Node, error) {
	if g.Dims() != 1 || g.Shape()[0] != lastDim(x.Shape()) {
		return nil, errors.Errorf("normalize: x %v with gain %v: gain must be a vector of x's last size", x.Shape(), g.Shape())
	}
	return Op{
		Name:  fmt.Sprintf("normalize(eps=%g,center=%t)", eps, center),
		Arity: 2,
		Shape: SameShape,
		F32:   normalizeKernels[float32](eps, center),
		F64:   normalizeKernels[float64](eps, center),
		Diff:  []bool{true, true},
		Save:  []int{0, 1},
	}.Apply(x, g)
}

// normalizeKernels are Normalize's kernels. With d = g ⊙ dy and r the row's
// 1/sqrt(σ² + eps), the backward pass is
//
//	dx = r · (d - mean(d) - x̂ · mean(d ⊙ x̂))   (the mean(d) term only when centered)
//	dg = Σ_rows dy ⊙ x̂
func normalizeKernels[T Float](eps float64, center bool) Kernels[T] {
	return Kernels[T]{
		Forward: func(y Operand[T], in []Operand[T]) error {
			normalizeRows(y.Data, in[0].Data, in[1].Data, eps, center)
			return nil
		},
		Backward: func(i int, d Operand[T], in []Operand[T], _, dy Operand[T]) error {
			normalizeBackward(d.Data, in[0].Data, in[1].Data, dy.Data, eps, center, i == 1)
			return nil
		},
	}
}

// rowStats returns the row's mean (0 unless center) and 1/sqrt(variance + eps).
func rowStats[T Float](x []T, eps float64, center bool) (mean, rstd float64) {
	if center {
		for _, v := range x {
			mean += float64(v)
		}
		mean /= float64(len(x))
	}
	var ss float64
	for _, v := range x {
		d := float64(v) - mean
		ss += d * d
	}
	return mean, 1 / math.Sqrt(ss/float64(len(x))+eps)
}

// normalizeRows writes y = g ⊙ x̂ row by row.
func normalizeRows[T Float](y, x, g []T, eps float64, center bool) {
	n := len(g)
	forRows(x, n, func(lo, hi int) {
		for r := lo * n; r < hi*n; r += n {
			xr, yr := x[r:r+n], y[r:r+n]
			mean, rstd := rowStats(xr, eps, center)
			for j, v := range xr {
				yr[j] = g[j] * T((float64(v)-mean)*rstd)
			}
		}
	})
}

// normalizeBackward writes the gradient of the gain (gain set) or of x into out.
func normalizeBackward[T Float](out, x, g, dy []T, eps float64, center, gain bool) {
	n := len(g)
	if gain {
		gainGrad(out, x, dy, eps, center)
		return
	}
	forRows(x, n, func(lo, hi int) {
		for r := lo * n; r < hi*n; r += n {
			xr, dyr := x[r:r+n], dy[r:r+n]
			mean, rstd := rowStats(xr, eps, center)
			var md, mdx float64
			for j, v := range xr {
				d := float64(g[j] * dyr[j])
				md += d
				mdx += d * (float64(v) - mean) * rstd
			}
			md /= float64(n)
			mdx /= float64(n)
			if !center {
				md = 0
			}
			or := out[r : r+n]
			for j, v := range xr {
				xh := (float64(v) - mean) * rstd
				or[j] = T(rstd * (float64(g[j]*dyr[j]) - md - xh*mdx))
			}
		}
	})
}

// gainGrad writes dg = Σ_rows dy ⊙ x̂: each row's statistics first, then the
// sums, every goroutine summing its own columns over all rows in order.
func gainGrad[T Float](dg, x, dy []T, eps float64, center bool) {
	n := len(dg)
	rows := len(x) / n
	stats := getScratch(2 * rows)
	defer putScratch(stats)
	st := *stats
	forRows(x, n, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			st[2*r], st[2*r+1] = rowStats(x[r*n:(r+1)*n], eps, center)
		}
	})
	forElems(n, rows, func(c0, c1 int) {
		out := dg[c0:c1]
		clear(out)
		for r := range rows {
			mean, rstd := st[2*r], st[2*r+1]
			xr, dyr := x[r*n+c0:r*n+c1], dy[r*n+c0:r*n+c1]
			for j, v := range xr {
				out[j] += dyr[j] * T((float64(v)-mean)*rstd)
			}
		}
	})
}
