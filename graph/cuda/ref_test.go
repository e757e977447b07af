package cuda

import (
	"math"
	"slices"
)

// Plain float64 references of the kernels, written from the formulas in the
// kernels' comments (and graph's and trainer's CPU kernels); their gradients
// are checked against finite differences in TestReferenceGradients.

func softmaxRef(x []float64, rows, cols int, log bool) []float64 {
	y := make([]float64, len(x))
	for r := range rows {
		xr, yr := x[r*cols:(r+1)*cols], y[r*cols:(r+1)*cols]
		m := math.Inf(-1)
		for _, v := range xr {
			m = max(m, v)
		}
		var s float64
		for _, v := range xr {
			s += math.Exp(v - m)
		}
		for j, v := range xr {
			if log {
				yr[j] = v - m - math.Log(s)
			} else {
				yr[j] = math.Exp(v-m) / s
			}
		}
	}
	return y
}

// maskedSoftmaxRef is graph.Softmax: softmax(scale·x + mask) with mask(r, j)
// the mask's entry for row r, column j; a row of only -Inf is zeros.
func maskedSoftmaxRef(x []float64, mask func(r, j int) float64, rows, cols int, scale float64) []float64 {
	v := make([]float64, len(x))
	for i := range x {
		v[i] = scale*x[i] + mask(i/cols, i%cols)
	}
	y := softmaxRef(v, rows, cols, false)
	for r := range rows {
		if m := slices.Max(v[r*cols : (r+1)*cols]); math.IsInf(m, -1) {
			clear(y[r*cols : (r+1)*cols])
		}
	}
	return y
}

// softmaxBwdRef is dx from y and dy; log for log-softmax's y.
func softmaxBwdRef(y, dy []float64, rows, cols int, log bool) []float64 {
	dx := make([]float64, len(y))
	for r := range rows {
		o := r * cols
		var s float64
		for j := range cols {
			if log {
				s += dy[o+j]
			} else {
				s += dy[o+j] * y[o+j]
			}
		}
		for j := range cols {
			if log {
				dx[o+j] = dy[o+j] - math.Exp(y[o+j])*s
			} else {
				dx[o+j] = y[o+j] * (dy[o+j] - s)
			}
		}
	}
	return dx
}

// layerNormRef is y and each row's mean and 1/sqrt(variance + eps); b may
// be nil.
func layerNormRef(x, g, b []float64, rows, cols int, eps float64, center bool) (y, mean, rstd []float64) {
	y, mean, rstd = make([]float64, len(x)), make([]float64, rows), make([]float64, rows)
	for r := range rows {
		xr := x[r*cols : (r+1)*cols]
		if center {
			for _, v := range xr {
				mean[r] += v / float64(cols)
			}
		}
		var sq float64
		for _, v := range xr {
			sq += (v - mean[r]) * (v - mean[r])
		}
		rstd[r] = 1 / math.Sqrt(sq/float64(cols)+eps)
		for j, v := range xr {
			y[r*cols+j] = g[j] * (v - mean[r]) * rstd[r]
			if b != nil {
				y[r*cols+j] += b[j]
			}
		}
	}
	return y, mean, rstd
}

// layerNormBwdRef is the gradients of x, g and b.
func layerNormBwdRef(dy, x, g []float64, rows, cols int, eps float64, center bool) (dx, dg, db []float64) {
	_, mean, rstd := layerNormRef(x, g, nil, rows, cols, eps, center)
	dx, dg, db = make([]float64, len(x)), make([]float64, cols), make([]float64, cols)
	n := float64(cols)
	for r := range rows {
		o := r * cols
		var md, mdx float64
		for j := range cols {
			xh := (x[o+j] - mean[r]) * rstd[r]
			d := g[j] * dy[o+j]
			if center {
				md += d / n
			}
			mdx += d * xh / n
			dg[j] += dy[o+j] * xh
			db[j] += dy[o+j]
		}
		for j := range cols {
			xh := (x[o+j] - mean[r]) * rstd[r]
			dx[o+j] = rstd[r] * (g[j]*dy[o+j] - md - xh*mdx)
		}
	}
	return dx, dg, db
}

// ceRef is the smoothed cross-entropy's stats [rows, 2].
func ceRef(x []float64, targets []int32, vocab int, eps float64, pad int32, logits bool) []float64 {
	stats := make([]float64, 2*len(targets))
	for r, t := range targets {
		if t == pad {
			continue
		}
		xr := x[r*vocab : (r+1)*vocab]
		var z, loss float64
		if logits {
			lp := softmaxRef(xr, 1, vocab, true)
			z = xr[0] - lp[0]
		}
		for v, xv := range xr {
			q := eps / float64(vocab)
			if v == int(t) {
				q += 1 - eps
			}
			loss -= q * (xv - z)
		}
		stats[2*r], stats[2*r+1] = z, loss
	}
	return stats
}

// ceBwdRef is the gradient of x from dstats.
func ceBwdRef(x []float64, targets []int32, dstats []float64, vocab int, eps float64, pad int32, logits bool) []float64 {
	dx := make([]float64, len(x))
	for r, t := range targets {
		if t == pad {
			continue
		}
		dz, dl := dstats[2*r], dstats[2*r+1]
		var s []float64
		if logits {
			s = softmaxRef(x[r*vocab:(r+1)*vocab], 1, vocab, false)
		}
		for v := range vocab {
			q := eps / float64(vocab)
			if v == int(t) {
				q += 1 - eps
			}
			dx[r*vocab+v] = -dl * q
			if logits {
				dx[r*vocab+v] += (dl + dz) * s[v]
			}
		}
	}
	return dx
}

// adamRef is trainer.Adam's step on one parameter.
func adamRef(theta, g, m, v []float64, b1, b2, eps, lr, c1, c2, scale, decay float64) {
	for i := range theta {
		theta[i] *= 1 - lr*decay
		gi := scale * g[i]
		m[i] = b1*m[i] + (1-b1)*gi
		v[i] = b2*v[i] + (1-b2)*gi*gi
		theta[i] -= lr * (m[i] / c1) / (math.Sqrt(v[i]/c2) + eps)
	}
}

// gemmRef is GEMM g's C over host matrices of float64.
func gemmRef(g GEMM, a, b, c []float64) []float64 {
	out := append([]float64(nil), c...)
	for q := range g.Batch {
		for i := range g.M {
			for j := range g.N {
				var s float64
				for p := range g.K {
					ia, ib := i*g.LDA+p, p*g.LDB+j
					if g.TransA {
						ia = p*g.LDA + i
					}
					if g.TransB {
						ib = j*g.LDB + p
					}
					s += a[q*g.StrideA+ia] * b[q*g.StrideB+ib]
				}
				ic := q*g.StrideC + i*g.LDC + j
				out[ic] = float64(g.Alpha) * s
				if g.Beta != 0 {
					out[ic] += float64(g.Beta) * c[ic]
				}
			}
		}
	}
	return out
}
