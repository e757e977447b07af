package ops

import (
	"math"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
)

// TestIDsMasks: the masks made in the graph from ids are -Inf exactly at
// the padding keys, and (causal) at the keys after the query, 0 elsewhere,
// in float32 and float64.
func TestIDsMasks(t *testing.T) {
	const batch, n, pad = 2, 4, 0
	ids := []int{5, 0, 7, 0, 0, 3, 3, 1}
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		for _, causal := range []bool{false, true} {
			params, err := graph.NewParams(dt, rand.New(rand.NewPCG(1, 1)))
			if err != nil {
				t.Fatal(err)
			}
			s := graph.NewScope(params)
			in := s.Input("ids", tensor.Int, batch, n)
			m := PaddingMask(s, in, pad)
			if causal {
				m = CausalMask(s, in, pad)
			}
			p, err := graph.Compile(nil, s, nil, map[string]*G.Node{"m": m})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			if err := p.Set("ids", ids); err != nil {
				t.Fatal(err)
			}
			if err := p.Run(); err != nil {
				t.Fatal(err)
			}
			got := graph.Float64s(p.Output("m"))
			rows := batch
			if causal {
				rows = batch * n
			}
			if len(got) != rows*n {
				t.Fatalf("%v causal=%t: %d values, want %d", dt, causal, len(got), rows*n)
			}
			for r := range rows {
				b, i := r, n
				if causal {
					b, i = r/n, r%n
				}
				for j := range n {
					want := 0.0
					if j > i || ids[b*n+j] == pad {
						want = math.Inf(-1)
					}
					if v := got[r*n+j]; v != want {
						t.Errorf("%v causal=%t: mask[%d, %d] = %v, want %v", dt, causal, r, j, v, want)
					}
				}
			}
		}
	}
}
