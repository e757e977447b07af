package graph

import (
	"math"
	"slices"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestColumnSumsInChunks checks the sums over rows of the backward passes
// of a bias (columnSums) and of a normalization's gain (gainGrad) against
// sums in float64, on row counts around the chunk of rows summed into one
// partial sum and on columns that leave a tail to the vector kernels'
// scalar loop.
func TestColumnSumsInChunks(t *testing.T) {
	const n = 37
	for _, rows := range []int{1, sumRowsChunk - 1, sumRowsChunk, sumRowsChunk + 1, 5*sumRowsChunk + 3} {
		x, dy := make([]float32, rows*n), make([]float32, rows*n)
		for i := range x {
			x[i] = float32(math.Sin(float64(i))*3 + 1)
			dy[i] = float32(math.Cos(float64(i*7)) / 2)
		}
		wantSum, wantGain := make([]float64, n), make([]float64, n)
		for r := range rows {
			xr, dyr := x[r*n:(r+1)*n], dy[r*n:(r+1)*n]
			mean, rstd := rowStats(xr, 1e-5, true)
			for j := range n {
				wantSum[j] += float64(xr[j])
				wantGain[j] += float64(dyr[j]) * (float64(xr[j]) - mean) * rstd
			}
		}
		sum, gain := make([]float32, n), make([]float32, n)
		columnSums(sum, x)
		gainGrad(gain, x, nil, dy, normForm{eps: 1e-5, center: true})
		for j := range n {
			if d := math.Abs(float64(sum[j]) - wantSum[j]); d > 1e-5*float64(rows) {
				t.Fatalf("%d rows: column %d sums to %g, want %g", rows, j, sum[j], wantSum[j])
			}
			if d := math.Abs(float64(gain[j]) - wantGain[j]); d > 1e-5*float64(rows) {
				t.Fatalf("%d rows: gain gradient %d is %g, want %g", rows, j, gain[j], wantGain[j])
			}
		}
	}
}

// TestAddNormalizeIsAddThenNormalize checks the fused Norm(x + r) against
// Add then the norm: the output and every gradient bit for bit, in both
// element types, with and without centering and bias, on rows whose length
// leaves a tail to the vector kernels.
func TestAddNormalizeIsAddThenNormalize(t *testing.T) {
	forms := []struct {
		name         string
		center, bias bool
	}{{"layer norm", true, true}, {"centered", true, false}, {"rms", false, false}}
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		for _, f := range forms {
			want := addNormRun(t, dt, f.center, f.bias, false)
			got := addNormRun(t, dt, f.center, f.bias, true)
			for name, w := range want {
				if g := got[name]; !slices.Equal(g, w) {
					t.Errorf("%v %s: the fused op's %s is %v, Add then the norm give %v", dt, f.name, name, g, w)
				}
			}
		}
	}
}

// addNormRun runs Σ w ⊙ Norm(x + r) on parameters drawn alike in every
// call, fused or as Add then the norm, and returns the norm's output and
// the gradients of x, r, the gain and the bias (if any).
func addNormRun(t *testing.T, dt tensor.Dtype, center, bias, fused bool) map[string][]float64 {
	t.Helper()
	const eps = 1e-5
	s := NewScope(newTestParams(t, dt))
	x, r := s.Param("x", tensor.Shape{2, 5, 37}, Normal(1)), s.Param("r", tensor.Shape{2, 5, 37}, Normal(1))
	g, w := s.Param("g", tensor.Shape{37}, Normal(1)), s.Param("w", tensor.Shape{2, 5, 37}, Normal(1))
	names := []string{"x", "r", "g"}
	var y, b *G.Node
	if bias {
		b = s.Param("b", tensor.Shape{37}, Normal(1))
		names = append(names, "b")
	}
	switch {
	case bias && fused:
		y = s.AddLayerNorm(x, r, g, b, eps)
	case bias:
		y = s.LayerNorm(s.Add(x, r), g, b, eps)
	case fused:
		y = s.AddNormalize(x, r, g, eps, center)
	default:
		y = s.Normalize(s.Add(x, r), g, eps, center)
	}
	p, err := Compile(nil, s, total(s, s.Mul(y, w)), map[string]*G.Node{"y": y})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Run(); err != nil {
		t.Fatal(err)
	}
	res := map[string][]float64{"output": Float64s(p.Output("y"))}
	for _, n := range names {
		res["gradient of "+n] = Float64s(p.Grad(n))
	}
	return res
}
