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
	p, err := graph.Compile(nil, s, nil, outs)
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
			// The whole sequence and its steps read one table of 6 rows.
			x := randomConstant(s, "x", rand.New(rand.NewPCG(1, 1)), 2, 6, 8)
			outs := map[string]*G.Node{"apply": tc.pos.Apply(s, x, nil)}
			for step := range 3 {
				st := s.In("step", step)
				at := &Slot{Index: intConstant(st, "slot", []int{step}, 1), Mask: st.Constant("slot_mask", StepMask(tensor.Float64, step, 6))}
				outs[fmt.Sprint(step)] = tc.pos.Apply(s, positionOf(st, x, step), at)
			}
			return outs
		})
		for step := range 3 {
			var want []float64
			for b := range 2 {
				row := (b*6 + step) * 8
				want = append(want, out["apply"][row:row+8]...)
			}
			assertNear(t, fmt.Sprintf("%s, step %d", tc.name, step), out[fmt.Sprint(step)], want)
		}
	}
}

// TestStepMatchesApply runs decoder and decoder-only stacks, with the
// paper's attention and with grouped-query attention, rotary or with
// ALiBi, on three positions at once (Apply under a causal mask) and one
// position at a time (the same Apply with caches of four slots).
func TestStepMatchesApply(t *testing.T) {
	pre := sizes
	pre.PreNorm = true
	rms := RMSNorm{DModel: sizes.DModel, Eps: 1e-6}
	rope := MultiHeadAttention{DModel: sizes.DModel, Heads: sizes.Heads, KVHeads: 1, Rotary: true}
	alibi := func(kv int) MultiHeadAttention { a := gqa(kv, false); a.Bias, a.Dropout = ALiBi{}, 0; return a }
	stacks := map[string]Stack{
		"decoder, post-norm":                         {Layer: Layer{Sizes: sizes, Cross: true}, N: 2},
		"decoder, pre-norm":                          {Layer: Layer{Sizes: pre, Cross: true, Norm: rms}, N: 2, FinalNorm: rms},
		"decoder-only, post-norm":                    {Layer: Layer{Sizes: sizes}, N: 2},
		"decoder-only, pre-norm":                     {Layer: Layer{Sizes: pre, Norm: rms}, N: 3, FinalNorm: rms},
		"decoder-only, rotary multi-query":           {Layer: Layer{Sizes: pre, Norm: rms, SelfAttn: rope}, N: 2, FinalNorm: rms},
		"decoder, rotary multi-query self-attention": {Layer: Layer{Sizes: sizes, Cross: true, SelfAttn: rope}, N: 2},
		"decoder-only, alibi":                        {Layer: Layer{Sizes: pre, Norm: rms, SelfAttn: alibi(4)}, N: 2, FinalNorm: rms},
		"decoder-only, alibi grouped-query":          {Layer: Layer{Sizes: pre, Norm: rms, SelfAttn: alibi(2)}, N: 2, FinalNorm: rms},
		"decoder-only, rotary grouped-query":         {Layer: Layer{Sizes: pre, Norm: rms, SelfAttn: gqa(2, true)}, N: 1, FinalNorm: rms},
	}
	for name, st := range stacks {
		t.Run(name, func(t *testing.T) { assertStepsMatchApply(t, st) })
	}
}

// assertStepsMatchApply checks that st gives three positions one at a
// time, against the caches of four slots that it declares, as Apply gives
// them at once under a causal mask.
func assertStepsMatchApply(t *testing.T, st Stack) {
	t.Helper()
	const steps, slots = 3, 4
	out := runGraph(t, func(s *graph.Scope) map[string]*G.Node {
		y := randomConstant(s, "y", rand.New(rand.NewPCG(5, 5)), 2, steps, sizes.DModel)
		memory := randomConstant(s, "memory", rand.New(rand.NewPCG(4, 4)), 2, 4, sizes.DModel)
		outs := map[string]*G.Node{"apply": st.Apply(s.In("decoder"), y, tgtMaskOf(s, steps), memory, srcMask(s), nil)}
		var cross []*Cache
		if st.Layer.Cross {
			cross = st.Memory(s.In("decoder"), memory)
		}
		c := &chain{}
		for step := range steps {
			// Constants are named apart: Gorgonia takes leaves of one name for one node.
			sc := s.In("step", step)
			at := &Slot{Index: intConstant(sc, "slot", []int{step}, 1), Mask: sc.Constant("slot_mask", StepMask(tensor.Float64, step, slots))}
			caches := st.Caches(s.In("decoder"), c, at, 2, cross)
			outs[fmt.Sprint(step)] = st.Apply(s.In("decoder"), positionOf(sc, y, step), nil, nil, srcMask(s), caches)
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
}

// chain is a Carrier of steps unrolled in one graph: a carried value is
// zeros at first, then the last value Update gave it.
type chain struct {
	of     map[*G.Node]string
	byName map[string]*G.Node
}

func (c *chain) Carried(s *graph.Scope, name string, shape ...int) *G.Node {
	if c.byName == nil {
		c.of, c.byName = map[*G.Node]string{}, map[string]*G.Node{}
	}
	full := s.Name(name)
	n, ok := c.byName[full]
	if !ok {
		n = s.Constant(name, graph.FromFloat64s(s.Dtype(), make([]float64, tensor.Shape(shape).TotalSize()), shape...))
		c.of[n], c.byName[full] = full, n
	}
	return n
}

func (c *chain) Update(carried, next *G.Node) {
	full := c.of[carried]
	c.of[next], c.byName[full] = full, next
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
