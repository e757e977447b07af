package layers

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
)

// runGraph builds a float64 evaluation graph, runs it and returns its outputs.
func runGraph(t *testing.T, build func(s *graph.Scope) map[string]*G.Node) map[string][]float64 {
	t.Helper()
	params, _ := graph.NewParams(tensor.Float64, rand.New(rand.NewPCG(2, 3)))
	s := graph.NewScope(params)
	outs := build(s)
	p, err := graph.Compile(s, nil, outs)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Run(); err != nil {
		t.Fatal(err)
	}
	res := map[string][]float64{}
	for name := range outs {
		res[name] = graph.Float64s(p.Output(name))
	}
	return res
}

// randomConstant is a constant of the given shape with normal values.
func randomConstant(s *graph.Scope, name string, rng *rand.Rand, shape ...int) *G.Node {
	v := make([]float64, tensor.Shape(shape).TotalSize())
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	return s.Constant(name, graph.FromFloat64s(tensor.Float64, v, shape...))
}

func intConstant(s *graph.Scope, name string, v []int, shape ...int) *G.Node {
	return s.Constant(name, tensor.New(tensor.WithShape(shape...), tensor.WithBacking(v)))
}

func assertNear(t *testing.T, what string, got, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Fatalf("%s[%d] = %g, want %g", what, i, got[i], want[i])
		}
	}
}

func TestPositionsAt(t *testing.T) {
	tests := []struct {
		name string
		pos  Positional
	}{
		{"sinusoidal", Sinusoidal{DModel: 8}},
		{"learned", Learned{MaxLen: 6, DModel: 8}},
	}
	for _, tc := range tests {
		out := runGraph(t, func(s *graph.Scope) map[string]*G.Node {
			x := randomConstant(s, "x", rand.New(rand.NewPCG(1, 1)), 2, 3, 8)
			pos := intConstant(s, "pos", []int{0, 1, 2, 0, 1, 2}, 2, 3)
			return map[string]*G.Node{"apply": tc.pos.Apply(s, x), "at": tc.pos.At(s, x, pos, 6)}
		})
		assertNear(t, tc.name, out["at"], out["apply"])
	}
}

// TestDecoderStepMatchesApply runs a decoder stack on three positions at once
// (Apply, under a causal mask) and one position at a time (Step, with caches
// of four slots).
func TestDecoderStepMatchesApply(t *testing.T) {
	pre := sizes
	pre.PreNorm, pre.Norm = true, "rms"
	for _, z := range []Sizes{sizes, pre} {
		d := Decoder{Layer: DecoderLayer{z}, Stack: Stack{N: 2, FinalNorm: z.PreNorm}}
		const steps, slots = 3, 4
		heads, dk := z.Heads, z.DModel/z.Heads
		out := runGraph(t, func(s *graph.Scope) map[string]*G.Node {
			rng := rand.New(rand.NewPCG(4, 4))
			y := randomConstant(s, "y", rand.New(rand.NewPCG(5, 5)), 2, steps, z.DModel)
			memory := randomConstant(s, "memory", rng, 2, 4, z.DModel)
			outs := map[string]*G.Node{"apply": d.Apply(s.In("decoder"), y, memory, tgtMaskOf(s, steps), srcMask(s))}
			kv := d.Memory(s.In("decoder"), memory)
			caches := make([]KV, d.N)
			for i := range caches {
				zero := graph.FromFloat64s(tensor.Float64, make([]float64, 2*heads*slots*dk), 2, heads, slots, dk)
				caches[i] = KV{K: s.Constant("k", zero), V: s.Constant("v", zero)}
			}
			for step := range steps {
				// Constants are named apart: Gorgonia takes leaves of one name for one node.
				st := s.In("step", step)
				at := Slot{Index: intConstant(st, "slot", []int{step}, 1), Mask: st.Constant("slot_mask", StepMask(tensor.Float64, step, slots))}
				var o *G.Node
				o, caches = d.Step(s.In("decoder"), positionOf(st, y, step), caches, at, kv, srcMask(s))
				outs[fmt.Sprint(step)] = o
			}
			return outs
		})
		for step := range steps {
			var want []float64
			for b := range 2 {
				row := (b*steps + step) * z.DModel
				want = append(want, out["apply"][row:row+z.DModel]...)
			}
			assertNear(t, fmt.Sprintf("step %d", step), out[fmt.Sprint(step)], want)
		}
	}
}

// tgtMaskOf is the causal mask of two unpadded sequences of length n.
func tgtMaskOf(s *graph.Scope, n int) *G.Node {
	ids := make([]int, 2*n)
	for i := range ids {
		ids[i] = 1
	}
	return s.Constant("causal", CausalMask(s.Dtype(), ids, 2, n, 0))
}

// positionOf is position t of y [2, len, d] as [2, 1, d], picked by a
// one-hot product.
func positionOf(s *graph.Scope, y *G.Node, t int) *G.Node {
	n := y.Shape()[1]
	pick := make([]float64, 2*n)
	pick[t], pick[n+t] = 1, 1
	sel := s.Constant("pick", graph.FromFloat64s(tensor.Float64, pick, 2, 1, n))
	return s.BatchedMatMul(sel, y, false, false)
}
