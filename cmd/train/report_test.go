package main

import (
	"math"
	"testing"
)

func TestRoundNeverWraps(t *testing.T) {
	for _, tc := range []struct{ in, want float64 }{
		{1.23456, 1.2346}, {-0.00004, 0}, {3e15, 3e15}, {1e300, 1e300}, {math.MaxFloat64, math.MaxFloat64},
	} {
		if got := round(tc.in); got != tc.want {
			t.Errorf("round(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
