package trainer

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/model"
)

// TestShardedGradientsMatch checks the arithmetic of data parallelism in
// float64: the gradient of a batch's mean loss equals the token-weighted sum
// of its shards' gradients over the batch's tokens, for 1 to 4 ranks.
func TestShardedGradientsMatch(t *testing.T) {
	f := newFixture(t)
	cfg := f.m.Config()
	cfg.Dropout = 0
	m, _ := model.New(cfg)
	params, err := model.NewParams(m, tensor.Float64, rand.New(rand.NewPCG(5, 5)))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := New(m, params, f.data, options(t.TempDir(), 1), nil)
	if err != nil {
		t.Fatal(err)
	}
	b := f.data.Train.Next()
	whole := map[string][]float64{}
	p, _ := tr.trainProgram(b)
	if err := m.Feed(p, ModelBatch(b)); err != nil {
		t.Fatal(err)
	}
	if err := p.Run(); err != nil {
		t.Fatal(err)
	}
	for _, name := range p.ParamNames() {
		whole[name] = graph.Float64s(p.Grad(name))
	}
	for size := 2; size <= 4; size++ {
		acc, err := tr.accumulator()
		if err != nil {
			t.Fatal(err)
		}
		for rank := range size {
			s := b.Shard(rank, size)
			if s.TgtTokens == 0 {
				continue
			}
			p, _ := tr.trainProgram(s)
			if err := m.Feed(p, ModelBatch(s)); err != nil {
				t.Fatal(err)
			}
			if err := p.Run(); err != nil {
				t.Fatal(err)
			}
			if err := acc.Add(p, float64(s.TgtTokens)); err != nil {
				t.Fatal(err)
			}
		}
		flat, err := acc.AppendHost(nil)
		if err != nil {
			t.Fatal(err)
		}
		sums := flat.([]float64)
		var diff, norm float64
		for _, name := range acc.ParamNames() {
			w := whole[name]
			for i, v := range sums[:len(w)] {
				v /= float64(b.TgtTokens)
				diff += (v - w[i]) * (v - w[i])
				norm += w[i] * w[i]
			}
			sums = sums[len(w):]
		}
		if d := math.Sqrt(diff / norm); d > 1e-12 {
			t.Errorf("%d ranks: sharded gradient at relative distance %.3g from the batch's", size, d)
		}
	}
}

// TestClipIsDeterministic clips, many times, gradients whose squared norm
// depends on the order of summation: 2^54 and twenty ones, which float64
// sums to 2^54 when 2^54 comes first (each one is below half its ulp of 4)
// and to about 2^54 + j when j ones come first, enough to change the norm's
// last bit. Every time must give the same bits, as every rank must.
func TestClipIsDeterministic(t *testing.T) {
	names := []string{"a"}
	for i := range 20 {
		names = append(names, fmt.Sprintf("b%02d", i))
	}
	scale := func() float64 {
		grads := map[string]*tensor.Dense{}
		for i, name := range names {
			v := 1.0
			if i == 0 {
				v = 1 << 27
			}
			grads[name] = tensor.New(tensor.WithShape(1), tensor.WithBacking([]float64{v}))
		}
		s, err := gradScale(graph.HostGradients(grads), 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	want := scale()
	for range 100 {
		if got := scale(); got != want {
			t.Fatalf("clip scale %v, then %v", want, got)
		}
	}
}
