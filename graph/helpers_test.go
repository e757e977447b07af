package graph

import (
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"
)

func newTestRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0)) }

func newTestParams(t *testing.T, dt tensor.Dtype) *Params {
	t.Helper()
	p, err := NewParams(dt, newTestRNG(1))
	if err != nil {
		t.Fatal(err)
	}
	return p
}
