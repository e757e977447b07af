package graph

import (
	"fmt"
	"math"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
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
	op := &kernelOp{
		name:    fmt.Sprintf("normalize(eps=%g,center=%t)", eps, center),
		arity:   2,
		sig:     signature(tensorType(x.Dims()), tensorType(x.Dims()), tensorType(1)),
		shape:   sameShape,
		diffWRT: []bool{true, true},
	}
	op.forward = func(y *tensor.Dense, in []*tensor.Dense) error {
		switch yd := y.Data().(type) {
		case []float32:
			normalizeRows(yd, in[0].Data().([]float32), in[1].Data().([]float32), eps, center)
		case []float64:
			normalizeRows(yd, in[0].Data().([]float64), in[1].Data().([]float64), eps, center)
		}
		return nil
	}
	op.diff = func(in G.Nodes, _, dy *G.Node) (G.Nodes, error) {
		dx, err := normalizeGrad(in[0], in[1], dy, eps, center, false)
		if err != nil {
			return nil, err
		}
		dg, err := normalizeGrad(in[0], in[1], dy, eps, center, true)
		return G.Nodes{dx, dg}, err
	}
	return apply(op, x, g)
}

// normalizeGrad is the backward pass of Normalize. With d = g ⊙ dy and r the
// row's 1/sqrt(σ² + eps):
//
//	dx = r · (d - mean(d) - x̂ · mean(d ⊙ x̂))   (the mean(d) term only when centered)
//	dg = Σ_rows dy ⊙ x̂                         (gain true)
func normalizeGrad(x, g, dy *G.Node, eps float64, center, gain bool) (*G.Node, error) {
	op := &kernelOp{
		name:  fmt.Sprintf("normalize_grad(eps=%g,center=%t,gain=%t)", eps, center, gain),
		arity: 3,
		sig:   signature(tensorType(x.Dims()), tensorType(x.Dims()), tensorType(1), tensorType(x.Dims())),
		shape: sameShape,
	}
	if gain {
		op.sig = signature(tensorType(1), tensorType(x.Dims()), tensorType(1), tensorType(x.Dims()))
		op.shape = func(s []tensor.Shape) (tensor.Shape, error) { return s[1].Clone(), nil }
	}
	op.forward = func(out *tensor.Dense, in []*tensor.Dense) error {
		switch od := out.Data().(type) {
		case []float32:
			normalizeBackward(od, in[0].Data().([]float32), in[1].Data().([]float32), in[2].Data().([]float32), eps, center, gain)
		case []float64:
			normalizeBackward(od, in[0].Data().([]float64), in[1].Data().([]float64), in[2].Data().([]float64), eps, center, gain)
		}
		return nil
	}
	return apply(op, x, g, dy)
}

// rowStats returns the row's mean (0 unless center) and 1/sqrt(variance + eps).
func rowStats[T float](x []T, eps float64, center bool) (mean, rstd float64) {
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

func normalizeRows[T float](y, x, g []T, eps float64, center bool) {
	n := len(g)
	for r := 0; r < len(x); r += n {
		xr, yr := x[r:r+n], y[r:r+n]
		mean, rstd := rowStats(xr, eps, center)
		for j, v := range xr {
			yr[j] = g[j] * T((float64(v)-mean)*rstd)
		}
	}
}

func normalizeBackward[T float](out, x, g, dy []T, eps float64, center, gain bool) {
	n := len(g)
	if gain {
		clear(out)
	}
	for r := 0; r < len(x); r += n {
		xr, dyr := x[r:r+n], dy[r:r+n]
		mean, rstd := rowStats(xr, eps, center)
		if gain {
			for j, v := range xr {
				out[j] += dyr[j] * T((float64(v)-mean)*rstd)
			}
			continue
		}
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
}
