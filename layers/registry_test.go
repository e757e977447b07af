package layers

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
)

func TestRegistryBuiltins(t *testing.T) {
	r := NewRegistry()
	tests := []struct {
		kind string
		got  []string
		want []string
	}{
		{"attention", r.Attention.Names(), []string{AttentionALiBi, AttentionGroupedQuery, AttentionMultiHead, AttentionRotary, AttentionSlidingWindow}},
		{"ffn", r.FFN.Names(), []string{FFNReLU, FFNSwiGLU}},
		{"norm", r.Norm.Names(), []string{NormLayer, NormRMS}},
		{"positions", r.Positions.Names(), []string{PositionsLearned, PositionsNone, PositionsSinusoid}},
	}
	for _, tc := range tests {
		if !slices.Equal(tc.got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.kind, tc.got, tc.want)
		}
	}
}

func TestRegistryErrors(t *testing.T) {
	r := NewRegistry()
	gated := func(z Sizes) FFN { return gatedFFN{DModel: z.DModel} }
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"empty name", r.FFN.Register("", gated), `name "" is empty`},
		{"spaces", r.FFN.Register("my ffn", gated), `"my ffn" is empty or holds spaces`},
		{"no constructor", r.FFN.Register("nil", nil), `ffn "nil": no constructor`},
		{"taken", r.FFN.Register(FFNReLU, gated), `"relu" is already registered`},
		{"unknown", second(r.Norm.New("batch", sizes)), `unknown norm "batch": registered are layer, rms`},
		{"unknown in a layer", second(r.Layer(sizes, Variants{Attention: "mqa", FFN: FFNReLU, Norm: NormLayer}, false)), `unknown attention "mqa"`},
	}
	for _, tc := range tests {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one saying %q", tc.name, tc.err, tc.want)
		}
	}
}

func second[T any](_ T, err error) error { return err }

// TestRegistriesAreApart registers a variant in one registry and finds it
// missing from another.
func TestRegistriesAreApart(t *testing.T) {
	a, b := NewRegistry(), NewRegistry()
	if err := a.FFN.Register("gated", func(z Sizes) FFN { return gatedFFN{DModel: z.DModel} }); err != nil {
		t.Fatal(err)
	}
	if _, err := a.FFN.New("gated", sizes); err != nil {
		t.Fatal(err)
	}
	if _, err := b.FFN.New("gated", sizes); err == nil {
		t.Fatal("a variant registered in one registry is found in another")
	}
}

// TestRegistryBuildsThePapersLayers checks that the built-in names make the
// same parameters and outputs as the layers' defaults.
func TestRegistryBuildsThePapersLayers(t *testing.T) {
	r := NewRegistry()
	v := Variants{Attention: AttentionMultiHead, FFN: FFNReLU, Norm: NormLayer}
	enc, err := r.Layer(sizes, v, false)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := r.Layer(sizes, v, true)
	if err != nil {
		t.Fatal(err)
	}
	build := func(e, d Layer) func(s *graph.Scope) map[string]*G.Node {
		return func(s *graph.Scope) map[string]*G.Node {
			x := randomConstant(s, "x", rand.New(rand.NewPCG(1, 2)), 2, 4, sizes.DModel)
			y := randomConstant(s, "y", rand.New(rand.NewPCG(3, 4)), 2, 3, sizes.DModel)
			return map[string]*G.Node{
				"encoder": e.Apply(s.In("encoder"), x, srcMask(s), nil, nil, nil),
				"decoder": d.Apply(s.In("decoder"), y, tgtMask(s), x, srcMask(s), nil),
			}
		}
	}
	want := runGraph(t, build(Layer{Sizes: sizes}, Layer{Sizes: sizes, Cross: true}))
	got := runGraph(t, build(enc, dec))
	for name := range want {
		assertNear(t, name, got[name], want[name])
	}
}

// gatedFFN is a feed-forward sublayer of a user's own, with parameters
// the paper's has not: y = (x·Wᵀ + b)·G, G a parameter "gate" [dModel, dModel].
type gatedFFN struct{ DModel int }

func (f gatedFFN) Apply(s *graph.Scope, x *G.Node) *G.Node {
	h := NewLinear(f.DModel, f.DModel).Apply(s.In("proj"), x)
	gate := s.Param("gate", tensor.Shape{f.DModel, f.DModel}, graph.XavierUniform)
	return s.MatMul(h, gate, false)
}

// onlyApply is an attention without an incremental form.
type onlyApply struct{ mha MultiHeadAttention }

func (a onlyApply) Apply(s *graph.Scope, q, kv, mask *G.Node, _ *Cache) *G.Node {
	return a.mha.Apply(s, q, kv, mask, nil)
}

// TestPluggedSublayers swaps sublayers of a layer: the parameters follow
// the plugged ones, the gradients are right, and a layer without an
// incremental attention says it cannot decode, naming it.
func TestPluggedSublayers(t *testing.T) {
	l := Layer{Sizes: sizes, FFN: gatedFFN{DModel: sizes.DModel}, Norm: RMSNorm{DModel: sizes.DModel, Eps: 1e-6}}
	params, _ := graph.NewParams(tensor.Float64, rand.New(rand.NewPCG(1, 1)))
	s := graph.NewScope(params)
	l.Apply(s.In("enc"), input(s, "x", 4), srcMask(s), nil, nil, nil)
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	names := params.Names()
	for _, want := range []string{"enc.feed_forward.proj.weight", "enc.feed_forward.gate", "enc.norm1.weight", "enc.self_attn.q_proj.weight"} {
		if !slices.Contains(names, want) {
			t.Errorf("no parameter %s in %v", want, names)
		}
	}
	for _, unwanted := range []string{"enc.feed_forward.linear1.weight", "enc.norm1.bias"} {
		if slices.Contains(names, unwanted) {
			t.Errorf("parameter %s of the default sublayer in %v", unwanted, names)
		}
	}
	c := graph.GradCheck{Build: func(s *graph.Scope) *G.Node { return l.Apply(s, input(s, "x", 4), srcMask(s), nil, nil, nil) }, Seed: 3, MaxPerParam: 16}
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}

	l.SelfAttn = onlyApply{mha()}
	s = graph.NewScope(graph.NewParamShapes(tensor.Float32))
	at := &Slot{Index: s.Input("slot", tensor.Int, 1), Mask: s.Input("slot_mask", tensor.Float32, 1, 1, 1, 4)}
	Stack{Layer: l, N: 1}.Caches(s, &chain{}, at, 2, nil)
	if err := s.Err(); err == nil || !strings.Contains(err.Error(), "layers.onlyApply cannot decode incrementally") {
		t.Fatalf("the cache of an attention of Apply alone: %v", err)
	}
}

// TestStackApply runs a layer with a sublayer of one's own through a
// Stack: each layer in its scope, then the final norm.
func TestStackApply(t *testing.T) {
	params, _ := graph.NewParams(tensor.Float32, rand.New(rand.NewPCG(1, 1)))
	s := graph.NewScope(params)
	st := Stack{Layer: Layer{Sizes: sizes, FFN: gatedFFN{DModel: sizes.DModel}}, N: 3, FinalNorm: LayerNorm{DModel: sizes.DModel, Eps: 1e-5}}
	out := st.Apply(s.In("decoder"), input(s, "x", 3), nil, nil, nil, nil)
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if !out.Shape().Eq(tensor.Shape{2, 3, sizes.DModel}) {
		t.Fatalf("the stack made %v, want [2 3 8]", out.Shape())
	}
	names := params.Names()
	for _, l := range []string{"0", "1", "2"} {
		if !slices.Contains(names, "decoder.layers."+l+".feed_forward.gate") {
			t.Errorf("no layer %s in %v", l, names)
		}
	}
	if !slices.Equal(names[len(names)-2:], []string{"decoder.norm.weight", "decoder.norm.bias"}) {
		t.Errorf("parameters %v do not end with the final norm", names)
	}
}

// TestVariantOptions builds variants with their declared options: left
// out, at their defaults; set, as set; and checks the values.
func TestVariantOptions(t *testing.T) {
	r := NewRegistry()
	a, _ := r.Attention.New(AttentionRotary, sizes)
	if g := a.(MultiHeadAttention); !g.Rotary || g.RotaryBase != 10000 || g.NoBias {
		t.Errorf("rotary with default options: %+v", g)
	}
	z := sizes
	z.Options = map[string]float64{OptionRotaryBase: 500, OptionNoBias: 1}
	a, _ = r.Attention.New(AttentionRotary, z)
	if g := a.(MultiHeadAttention); g.RotaryBase != 500 || !g.NoBias {
		t.Errorf("rotary with rotary_base 500 and no_bias 1: %+v", g)
	}
	z.Cross = true
	a, _ = r.Attention.New(AttentionALiBi, z)
	if g := a.(MultiHeadAttention); g.Rotary || g.Bias != nil {
		t.Errorf("alibi cross-attention places positions: %+v", g)
	}
	a, _ = r.Attention.New(AttentionALiBi, sizes)
	if g := a.(MultiHeadAttention); g.Bias != (ALiBi{MaxBias: 8}) {
		t.Errorf("alibi with default options: %+v", g)
	}
	names := map[string]bool{}
	for _, o := range r.Attention.Options(AttentionALiBi) {
		names[o.Name] = true
	}
	if !names[OptionALiBiMaxBias] || !names[OptionNoBias] || len(names) != 2 {
		t.Errorf("alibi declares %v", names)
	}
	if err := alibiMaxBias.Check(0); err == nil || !strings.Contains(err.Error(), "option alibi_max_bias is 0, want > 0") {
		t.Errorf("alibi_max_bias 0: %v", err)
	}
	if err := NoBias.Check(0.5); err == nil || NoBias.Check(1) != nil {
		t.Errorf("no_bias 0.5: %v", err)
	}
}
