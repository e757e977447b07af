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

// stepCase is a stack run whole (apply) and one position at a time (step);
// memory is the encoder's output, for stacks that attend to one.
type stepCase struct {
	name  string
	stack Stack
	apply func(s *graph.Scope, y, memory *G.Node) *G.Node
	step  func(s *graph.Scope, y *G.Node, caches []KV, at Slot, memory *G.Node) (*G.Node, []KV)
}

// TestStepMatchesApply runs decoder and decoder-only stacks on three
// positions at once (Apply, under a causal mask) and one position at a time
// (Step, with caches of four slots).
func TestStepMatchesApply(t *testing.T) {
	pre := sizes
	pre.PreNorm = true
	rms := RMSNorm{DModel: sizes.DModel, Eps: 1e-6}
	var tests []stepCase
	for _, d := range []Decoder{
		{Layer: DecoderLayer{Sizes: sizes}, Stack: Stack{N: 2}},
		{Layer: DecoderLayer{Sizes: pre, Norm: rms}, Stack: Stack{N: 2, FinalNorm: rms}},
	} {
		tests = append(tests, stepCase{
			fmt.Sprintf("decoder, pre-norm %v", d.Layer.PreNorm), d.Stack,
			func(s *graph.Scope, y, memory *G.Node) *G.Node {
				return d.Apply(s.In("decoder"), y, memory, tgtMaskOf(s, y.Shape()[1]), srcMask(s))
			},
			func(s *graph.Scope, y *G.Node, caches []KV, at Slot, memory *G.Node) (*G.Node, []KV) {
				// memory is projected at every step here: the same values as once.
				return d.Step(s.In("decoder"), y, caches, at, d.Memory(s.In("decoder"), memory), srcMask(s))
			},
		})
	}
	for _, e := range []Encoder{
		{Layer: EncoderLayer{Sizes: sizes}, Stack: Stack{N: 2}},
		{Layer: EncoderLayer{Sizes: pre, Norm: rms}, Stack: Stack{N: 3, FinalNorm: rms}},
	} {
		tests = append(tests, stepCase{
			fmt.Sprintf("decoder-only, pre-norm %v", e.Layer.PreNorm), e.Stack,
			func(s *graph.Scope, y, _ *G.Node) *G.Node {
				return e.Apply(s.In("decoder"), y, tgtMaskOf(s, y.Shape()[1]))
			},
			func(s *graph.Scope, y *G.Node, caches []KV, at Slot, _ *G.Node) (*G.Node, []KV) {
				return e.Step(s.In("decoder"), y, caches, at)
			},
		})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			const steps, slots = 3, 4
			heads, dk := sizes.Heads, sizes.DModel/sizes.Heads
			out := runGraph(t, func(s *graph.Scope) map[string]*G.Node {
				y := randomConstant(s, "y", rand.New(rand.NewPCG(5, 5)), 2, steps, sizes.DModel)
				memory := randomConstant(s, "memory", rand.New(rand.NewPCG(4, 4)), 2, 4, sizes.DModel)
				outs := map[string]*G.Node{"apply": tc.apply(s, y, memory)}
				caches := make([]KV, tc.stack.N)
				for i := range caches {
					zero := graph.FromFloat64s(tensor.Float64, make([]float64, 2*heads*slots*dk), 2, heads, slots, dk)
					caches[i] = KV{K: s.Constant("k", zero), V: s.Constant("v", zero)}
				}
				for step := range steps {
					// Constants are named apart: Gorgonia takes leaves of one name for one node.
					st := s.In("step", step)
					at := Slot{Index: intConstant(st, "slot", []int{step}, 1), Mask: st.Constant("slot_mask", StepMask(tensor.Float64, step, slots))}
					var o *G.Node
					o, caches = tc.step(s, positionOf(st, y, step), caches, at, memory)
					outs[fmt.Sprint(step)] = o
				}
				return outs
			})
			for step := range steps {
				var want []float64
				for b := range 2 {
					row := (b*steps + step) * sizes.DModel
					want = append(want, out["apply"][row:row+sizes.DModel]...)
				}
				assertNear(t, fmt.Sprintf("step %d", step), out[fmt.Sprint(step)], want)
			}
		})
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
