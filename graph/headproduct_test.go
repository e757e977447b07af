package graph

import (
	"fmt"
	"slices"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// repeatHeads is x [batch, len, kvHeads·dk] with each head repeated group
// times, side by side: the keys or values that grouped-query attention's
// query heads read.
func repeatHeads(s *Scope, x *G.Node, kvHeads, group int) *G.Node {
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
		got := run(t, tensor.Float32, func(s *Scope) map[string]*G.Node {
			q := s.Param("q", tensor.Shape{2, 5, heads * dk}, Normal(1))
			k := s.Param("k", tensor.Shape{2, 7, kv * dk}, Normal(1))
			w := s.Param("w", tensor.Shape{2, heads, 5, 7}, Normal(1))
			full := repeatHeads(s, k, kv, heads/kv)
			return map[string]*G.Node{
				"scores": s.HeadScores(q, k, heads), "scores repeated": s.HeadScores(q, full, heads),
				"mix": s.HeadMix(w, k, kv), "mix repeated": s.HeadMix(w, full, heads),
			}
		})
		for _, name := range []string{"scores", "mix"} {
			a, b := got[name], got[name+" repeated"]
			if !a.Shape().Eq(b.Shape()) || !slices.Equal(a.Data().([]float32), b.Data().([]float32)) {
				t.Errorf("%d key/value heads: %s %v differs from its repeated heads' %v", kv, name, a.Shape(), b.Shape())
			}
		}
		for _, grain := range []int{grainElems, 1} {
			for name, build := range map[string]func(s *Scope) *G.Node{
				"scores": func(s *Scope) *G.Node {
					return s.HeadScores(s.Param("q", tensor.Shape{2, 3, heads * dk}, Normal(1)), s.Param("k", tensor.Shape{2, 4, kv * dk}, Normal(1)), heads)
				},
				"mix": func(s *Scope) *G.Node {
					return s.HeadMix(s.Param("w", tensor.Shape{2, heads, 3, 4}, Normal(1)), s.Param("v", tensor.Shape{2, 4, kv * dk}, Normal(1)), kv)
				},
			} {
				t.Run(fmt.Sprintf("%s of %d key/value heads, parts of %d", name, kv, grain), func(t *testing.T) {
					defer SetGrain(SetGrain(grain))
					if err := (GradCheck{Build: build, Seed: 7, Float32: true}).Run(); err != nil {
						t.Fatal(err)
					}
				})
			}
		}
	}
}

// TestHeadProductSizeErrors checks that key/value heads that do not
// divide the query heads are refused.
func TestHeadProductSizeErrors(t *testing.T) {
	s := NewScope(newTestParams(t, tensor.Float32))
	q, k := s.Param("q", tensor.Shape{2, 3, 8}, Normal(1)), s.Param("k", tensor.Shape{2, 3, 6}, Normal(1))
	if _, err := HeadScores(q, k, 4); err == nil {
		t.Error("HeadScores of 4 query heads and 3 key heads gave no error")
	}
	if _, err := HeadMix(s.Param("w", tensor.Shape{2, 4, 3, 3}, Normal(1)), k, 3); err == nil {
		t.Error("HeadMix of 4 heads and 3 value heads gave no error")
	}
}
