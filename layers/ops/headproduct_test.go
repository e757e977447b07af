package ops

import (
	"fmt"
	"runtime"
	"slices"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
)

// TestHeadProductsEqualSplitHeads checks HeadScores and HeadMix against the
// ops they stand for, SplitHeads, BatchedMatMul and MergeHeads: the same
// products, equal bit for bit in float32 and in BF16 products (which
// differ from float32's at these sizes), on one goroutine or several.
func TestHeadProductsEqualSplitHeads(t *testing.T) {
	const heads, dk = 2, 64
	build := func(s *graph.Scope) map[string]*G.Node {
		q := s.Param("q", tensor.Shape{2, 64, heads * dk}, graph.Normal(1))
		k := s.Param("k", tensor.Shape{2, 66, heads * dk}, graph.Normal(1))
		w := s.Param("w", tensor.Shape{2, heads, 64, 66}, graph.Normal(1))
		split := func(x *G.Node) *G.Node { return SplitHeads(s, x, heads) }
		return map[string]*G.Node{
			"scores": HeadScores(s, q, k, heads), "scores by split": s.BatchedMatMul(split(q), split(k), false, true),
			"mix": HeadMix(s, w, k, heads), "mix by split": MergeHeads(s, s.BatchedMatMul(w, split(k), false, false)),
		}
	}
	var got [2]map[string]*tensor.Dense
	for i, prec := range []graph.Precision{graph.Float32, graph.BF16} {
		rt, err := graph.NewRuntime(graph.DeviceCPU, prec)
		if err != nil {
			t.Fatal(err)
		}
		got[i] = run(t, rt, tensor.Float32, build)
		for _, procs := range []int{1, 4} {
			old := runtime.GOMAXPROCS(procs)
			again := run(t, rt, tensor.Float32, build)
			runtime.GOMAXPROCS(old)
			for _, name := range []string{"scores", "mix"} {
				a, b, c := got[i][name], got[i][name+" by split"], again[name]
				if !a.Shape().Eq(b.Shape()) || !slices.Equal(a.Float32s(), b.Float32s()) || !slices.Equal(a.Float32s(), c.Float32s()) {
					t.Errorf("%s products, %d goroutines: %s %v differs from %v by split heads or from its run on GOMAXPROCS", prec, procs, name, a.Shape(), b.Shape())
				}
			}
		}
	}
	if slices.Equal(got[0]["scores"].Float32s(), got[1]["scores"].Float32s()) {
		t.Error("the scores of BF16 products equal float32's: the BF16 kernel did not run")
	}
}

// repeatHeads is x [batch, len, kvHeads·dk] with each head repeated group
// times, side by side: the keys or values that grouped-query attention's
// query heads read.
func repeatHeads(s *graph.Scope, x *G.Node, kvHeads, group int) *G.Node {
	dk := x.Shape()[2] / kvHeads
	var cols []*G.Node
	for g := range kvHeads {
		for range group {
			cols = append(cols, s.Slice(x, -1, g*dk, (g+1)*dk))
		}
	}
	return s.Concat(-1, cols...)
}

// TestGroupedHeadProducts checks HeadScores and HeadMix of fewer key/value
// heads than query heads against the same products of the key/value heads
// repeated for each query head of their group, bit for bit, and their
// gradients against finite differences.
func TestGroupedHeadProducts(t *testing.T) {
	const heads, dk = 6, 2
	for _, kv := range []int{1, 2, 3} {
		got := run(t, nil, tensor.Float32, func(s *graph.Scope) map[string]*G.Node {
			q := s.Param("q", tensor.Shape{2, 5, heads * dk}, graph.Normal(1))
			k := s.Param("k", tensor.Shape{2, 7, kv * dk}, graph.Normal(1))
			w := s.Param("w", tensor.Shape{2, heads, 5, 7}, graph.Normal(1))
			full := repeatHeads(s, k, kv, heads/kv)
			return map[string]*G.Node{
				"scores": HeadScores(s, q, k, heads), "scores repeated": HeadScores(s, q, full, heads),
				"mix": HeadMix(s, w, k, kv), "mix repeated": HeadMix(s, w, full, heads),
			}
		})
		for _, name := range []string{"scores", "mix"} {
			a, b := got[name], got[name+" repeated"]
			if !a.Shape().Eq(b.Shape()) || !slices.Equal(a.Float32s(), b.Float32s()) {
				t.Errorf("%d key/value heads: %s %v differs from its repeated heads' %v", kv, name, a.Shape(), b.Shape())
			}
		}
		for name, build := range map[string]func(s *graph.Scope) *G.Node{
			"scores": func(s *graph.Scope) *G.Node {
				return HeadScores(s, s.Param("q", tensor.Shape{2, 3, heads * dk}, graph.Normal(1)), s.Param("k", tensor.Shape{2, 4, kv * dk}, graph.Normal(1)), heads)
			},
			"mix": func(s *graph.Scope) *G.Node {
				return HeadMix(s, s.Param("w", tensor.Shape{2, heads, 3, 4}, graph.Normal(1)), s.Param("v", tensor.Shape{2, 4, kv * dk}, graph.Normal(1)), kv)
			},
		} {
			t.Run(fmt.Sprintf("%s of %d key/value heads", name, kv), func(t *testing.T) {
				if err := (graph.GradCheck{Build: build, Seed: 7, Float32: true}).Run(); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}
