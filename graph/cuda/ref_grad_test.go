package cuda

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestReferenceGradients checks the references' backward passes against
// finite differences of their forward passes, so that the kernels are held
// to gradients that are right, not only to formulas that agree.
func TestReferenceGradients(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 1))
	const rows, cols = 3, 5
	x, w := f64(randn(r, rows*cols, 2)), f64(randn(r, rows*cols, 1))
	for _, log := range []bool{false, true} {
		y := softmaxRef(x, rows, cols, log)
		checkGrad(t, "softmax", func(x []float64) float64 { return dot(w, softmaxRef(x, rows, cols, log)) }, x, softmaxBwdRef(y, w, rows, cols, log))
	}
	mask := func(r, j int) float64 {
		if j > r+1 {
			return math.Inf(-1)
		}
		return 0.25 * float64(j)
	}
	y, dx := maskedSoftmaxRef(x, mask, rows, cols, 0.5), []float64(nil)
	for _, v := range softmaxBwdRef(y, w, rows, cols, false) {
		dx = append(dx, 0.5*v)
	}
	checkGrad(t, "masked softmax", func(x []float64) float64 { return dot(w, maskedSoftmaxRef(x, mask, rows, cols, 0.5)) }, x, dx)

	g, b := f64(randn(r, cols, 1)), f64(randn(r, cols, 1))
	for _, center := range []bool{true, false} {
		dx, dg, db := layerNormBwdRef(w, x, g, rows, cols, 1e-5, center)
		ln := func(x, g, b []float64) float64 {
			y, _, _ := layerNormRef(x, g, b, rows, cols, 1e-5, center)
			return dot(w, y)
		}
		checkGrad(t, "layer norm dx", func(x []float64) float64 { return ln(x, g, b) }, x, dx)
		checkGrad(t, "layer norm dg", func(g []float64) float64 { return ln(x, g, b) }, g, dg)
		checkGrad(t, "layer norm db", func(b []float64) float64 { return ln(x, g, b) }, b, db)
	}

	targets, dstats := []int32{2, 0, 4}, f64(randn(r, 2*rows, 1))
	for _, logits := range []bool{true, false} {
		grad := ceBwdRef(x, targets, dstats, cols, 0.1, 0, logits)
		checkGrad(t, "cross-entropy", func(x []float64) float64 { return dot(dstats, ceRef(x, targets, cols, 0.1, 0, logits)) }, x, grad)
	}
}
