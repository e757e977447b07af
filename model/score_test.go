package model

import (
	"math"
	"slices"
	"testing"

	"gorgonia.org/tensor"
)

// TestScoreRows scores made-up log-probabilities: each row's sum over its
// targets, and whether each target is the most probable token.
func TestScoreRows(t *testing.T) {
	// Two rows of two positions over a vocabulary of 3; the second row's
	// second target is padding.
	lp := []float64{
		math.Log(0.1), math.Log(0.2), math.Log(0.7), // target 2: most probable
		math.Log(0.1), math.Log(0.3), math.Log(0.6), // target 1: not
		math.Log(0.2), math.Log(0.5), math.Log(0.3), // target 1: most probable
		math.Log(0.9), math.Log(0.05), math.Log(0.05), // padding
	}
	b := Batch{Shape: Shape{Batch: 2, TgtLen: 2}, TgtOut: []int{2, 1, 1, PadID}}
	sc := Score(tensor.New(tensor.WithShape(2, 2, 3), tensor.WithBacking(lp)), b)
	wantRows := []float64{math.Log(0.7) + math.Log(0.3), math.Log(0.5)}
	if sc.Tokens != 3 || sc.Correct != 2 || !slices.Equal(sc.Exact, []bool{false, true}) ||
		math.Abs(sc.Rows[0]-wantRows[0]) > 1e-12 || math.Abs(sc.Rows[1]-wantRows[1]) > 1e-12 ||
		math.Abs(sc.NLL+wantRows[0]+wantRows[1]) > 1e-12 {
		t.Fatalf("scores %+v, want rows %v, exact [false true], 3 tokens, 2 correct", sc, wantRows)
	}
}
