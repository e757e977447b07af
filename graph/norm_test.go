package graph

import (
	"math"
	"testing"
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
		gainGrad(gain, x, dy, 1e-5, true)
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
