package checkpoint

import (
	"maps"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/layers"
	"github.com/transformer-go/transformer/model"
)

// scaledFFN is a variant of one's own: the paper's feed-forward network,
// its output RMS-normalized with a learned gain "scale" [dModel].
type scaledFFN struct{ layers.FeedForward }

func (f scaledFFN) Apply(s *graph.Scope, x *G.Node) *G.Node {
	scale := s.Param("scale", tensor.Shape{f.DModel}, graph.Ones)
	return s.Normalize(f.FeedForward.Apply(s, x), scale, 1e-5, false)
}

// userRegistry registers scaledFFN as "scaled".
func userRegistry(t *testing.T) *layers.Registry {
	t.Helper()
	reg := layers.NewRegistry()
	err := reg.FFN.Register("scaled", func(z layers.Sizes) layers.FFN { return scaledFFN{layers.NewFeedForward(z.DModel, z.DFF)} })
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// evalLogProbs runs m's evaluation program on testBatch.
func evalLogProbs(t *testing.T, m model.Model, params *graph.Params) []float64 {
	t.Helper()
	b := testBatch
	if m.Config().Kind == model.KindEncoderOnly {
		b = model.Batch{Shape: model.Shape{Batch: 1, SrcLen: 3, TgtLen: 3}, Src: []int{5, 6, 0}, TgtIn: []int{1, 5, 0}, TgtOut: []int{6, 5, 0}}
	}
	p, err := model.CompileEval(nil, m, params, b.Shape)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err = m.Feed(p, b); err == nil {
		err = p.Run()
	}
	if err != nil {
		t.Fatal(err)
	}
	return graph.Float64s(p.Output(model.LogProbs))
}

// TestLoadRebuildsEveryKind saves models of every kind, some with a variant
// of the test's own, and rebuilds each from its checkpoint with one call:
// the same kind, config, parameters and outputs.
func TestLoadRebuildsEveryKind(t *testing.T) {
	reg := userRegistry(t)
	pre := smallConfig()
	pre.PreNorm, pre.Norm, pre.Positions, pre.FFN = true, "rms", "learned", "scaled"
	rope := pre
	rope.Attention, rope.KVHeads, rope.Positions, rope.FFN = layers.AttentionRotary, 1, layers.PositionsNone, layers.FFNSwiGLU
	alibi := rope
	alibi.Attention, alibi.Options = layers.AttentionALiBi, map[string]float64{layers.OptionALiBiMaxBias: 4, layers.OptionNoBias: 1}
	ropeBase := rope
	ropeBase.Options = map[string]float64{layers.OptionRotaryBase: 500}
	window := pre
	window.Attention, window.Options = layers.AttentionSlidingWindow, map[string]float64{layers.OptionWindow: 2}
	tests := []struct {
		kind   string
		cfg    model.Config
		layout model.Layout
	}{
		{model.KindEncoderDecoder, smallConfig(), model.Layout{Sources: true}},
		{model.KindDecoderOnly, smallConfig(), model.Layout{}},
		{model.KindEncoderOnly, smallConfig(), model.Layout{Sources: true, Aligned: true}},
		{model.KindEncoderDecoder, pre, model.Layout{Sources: true}},
		{model.KindDecoderOnly, pre, model.Layout{}},
		{model.KindDecoderOnly, rope, model.Layout{}},
		{model.KindDecoderOnly, alibi, model.Layout{}},
		{model.KindDecoderOnly, ropeBase, model.Layout{}},
		{model.KindDecoderOnly, window, model.Layout{}},
	}
	for _, tc := range tests {
		name := tc.kind + ", ffn " + tc.cfg.FFN
		t.Run(name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Kind = tc.kind
			m, err := model.FromConfig(cfg, reg)
			if err != nil {
				t.Fatal(err)
			}
			params, err := model.NewParams(m, tensor.Float64, rand.New(rand.NewPCG(4, 5)))
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "ck.safetensors")
			if err := Save(path, m.Config(), params, nil); err != nil {
				t.Fatal(err)
			}
			got, gotParams, err := Load(path, tensor.Float64, reg)
			if err != nil {
				t.Fatal(err)
			}
			if got.Layout() != tc.layout || model.KindLayout(tc.kind) != tc.layout || !got.Config().Equal(m.Config()) {
				t.Fatalf("rebuilt %+v with %+v, want %+v with %+v", got.Layout(), got.Config(), tc.layout, m.Config())
			}
			if !slices.Equal(gotParams.Names(), params.Names()) {
				t.Fatalf("parameters %v, want %v", gotParams.Names(), params.Names())
			}
			if cfg.FFN == "scaled" && !slices.Contains(params.Names(), "decoder.layers.0.feed_forward.scale") {
				t.Fatalf("the registered variant is not in the model: %v", params.Names())
			}
			if cfg.KVHeads == 1 {
				// One key/value head of dk = dModel/heads features.
				k := gotParams.Value("decoder.layers.0.self_attn.k_proj.weight")
				if want := (tensor.Shape{cfg.DModel / cfg.Heads, cfg.DModel}); !k.Shape().Eq(want) {
					t.Fatalf("k_proj.weight %v, want %v", k.Shape(), want)
				}
			}
			want, have := evalLogProbs(t, m, params), evalLogProbs(t, got, gotParams)
			if !slices.Equal(want, have) {
				t.Fatal("the rebuilt model computes other log-probabilities")
			}
		})
	}
}

// TestLoadNeedsTheVariants loads a checkpoint of a registered variant
// without its registry, and a decoder-only checkpoint as an
// encoder-decoder: one clear error each.
func TestLoadNeedsTheVariants(t *testing.T) {
	dir := t.TempDir()
	save := func(name string, cfg model.Config, reg *layers.Registry) string {
		m, err := model.FromConfig(cfg, reg)
		if err != nil {
			t.Fatal(err)
		}
		params, _ := model.NewParams(m, tensor.Float32, rand.New(rand.NewPCG(1, 1)))
		path := filepath.Join(dir, name)
		if err := Save(path, m.Config(), params, nil); err != nil {
			t.Fatal(err)
		}
		return path
	}
	scaled := smallConfig()
	scaled.FFN = "scaled"
	tests := []struct {
		name string
		load func() error
		want string
	}{
		{"variant not registered", func() error {
			_, _, err := Load(save("scaled.safetensors", scaled, userRegistry(t)), tensor.Float32, nil)
			return err
		}, `unknown ffn "scaled": registered are relu`},
	}
	for _, tc := range tests {
		err := tc.load()
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Count(err.Error(), "\n") > 0 {
			t.Errorf("%s: error %v, want one line saying %q", tc.name, err, tc.want)
		}
	}
}

// TestLoadOlderCheckpoint loads a checkpoint whose config predates kinds
// and variant names: it is the paper's encoder-decoder.
func TestLoadOlderCheckpoint(t *testing.T) {
	raw := configJSON(t, map[string]any{"kind": nil, "attention": nil, "ffn": nil})
	m, _, err := Load(writeCheckpoint(t, t.TempDir(), raw, nil), tensor.Float32, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.(*model.Transformer); !ok || m.Config().Attention != layers.AttentionMultiHead || m.Config().FFN != layers.FFNReLU {
		t.Fatalf("an older checkpoint rebuilt as %T with %+v", m, m.Config())
	}
}

// TestLoadOlderContradiction loads a checkpoint written before FromConfig
// refused its config (rotary attention with sinusoidal positions, kv_heads
// under multi-head attention): the model it holds comes back, while
// FromConfig refuses the config, naming the field.
func TestLoadOlderContradiction(t *testing.T) {
	cfg := smallConfig()
	cfg.Attention, cfg.KVHeads = layers.AttentionRotary, 1
	m, err := model.Rebuild(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	params, _ := model.NewParams(m, tensor.Float32, rand.New(rand.NewPCG(1, 1)))
	path := filepath.Join(t.TempDir(), "old.safetensors")
	if err := Save(path, cfg, params, nil); err != nil {
		t.Fatal(err)
	}
	if _, loaded, err := Load(path, tensor.Float32, nil); err != nil || loaded.Count() != params.Count() {
		t.Fatalf("loading: %v", err)
	}
	if _, err := model.FromConfig(cfg, nil); err == nil || !strings.Contains(err.Error(), "positions is sinusoidal") {
		t.Fatalf("FromConfig: %v", err)
	}
}

// TestVariantOptions checks that a variant's options change the model, and
// that an option no variant of the config declares, or a value its
// variant does not take, is an error naming it.
func TestVariantOptions(t *testing.T) {
	cfg := smallConfig()
	cfg.Kind, cfg.Attention, cfg.Positions = model.KindDecoderOnly, layers.AttentionRotary, layers.PositionsNone
	logProbs := func(cfg model.Config) []float64 {
		m, err := model.FromConfig(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		params, _ := model.NewParams(m, tensor.Float64, rand.New(rand.NewPCG(4, 5)))
		return evalLogProbs(t, m, params)
	}
	base := logProbs(cfg)
	cfg.Options = map[string]float64{layers.OptionRotaryBase: 10000}
	if !slices.Equal(logProbs(cfg), base) {
		t.Error("rotary_base 10000, the default, changes the model")
	}
	cfg.Options[layers.OptionRotaryBase] = 3
	if slices.Equal(logProbs(cfg), base) {
		t.Error("rotary_base 3 changes nothing")
	}
	tests := []struct {
		options map[string]float64
		want    string
	}{
		{map[string]float64{layers.OptionRotaryBase: -1}, "option rotary_base is -1, want > 0"},
		{map[string]float64{layers.OptionALiBiMaxBias: 4}, "options.alibi_max_bias is set, but attention rotary, ffn relu, norm layer and positions none declare the options no_bias, rotary_base"},
		{map[string]float64{layers.OptionNoBias: 2}, "option no_bias is 2, want 0 or 1"},
	}
	for _, tc := range tests {
		cfg.Options = tc.options
		if _, err := model.FromConfig(cfg, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one saying %q", tc.options, err, tc.want)
		}
	}
}

// TestCheckpointsRecordEveryOption checks that a model's config holds
// every option of its variants, those its config leaves out at their
// defaults, that a checkpoint records them and loads the same model, and
// that Equal takes an option left out (as in a checkpoint written before
// every option was recorded) for its default, and no other value.
func TestCheckpointsRecordEveryOption(t *testing.T) {
	cfg := smallConfig()
	cfg.Kind, cfg.Attention, cfg.Positions = model.KindDecoderOnly, layers.AttentionRotary, layers.PositionsNone
	cfg.Options = map[string]float64{layers.OptionRotaryBase: 500}
	m, err := model.FromConfig(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{layers.OptionRotaryBase: 500, layers.OptionNoBias: 0}
	if got := m.Config().Options; !maps.Equal(got, want) {
		t.Fatalf("the model's options are %v, want %v", got, want)
	}
	params, _ := model.NewParams(m, tensor.Float64, rand.New(rand.NewPCG(4, 5)))
	path := filepath.Join(t.TempDir(), "options.safetensors")
	if err := Save(path, m.Config(), params, nil); err != nil {
		t.Fatal(err)
	}
	ck, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(ck.Config.Options, want) {
		t.Fatalf("the checkpoint records the options %v, want %v", ck.Config.Options, want)
	}
	loaded, weights, err := ck.Model(tensor.Float64, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(evalLogProbs(t, loaded, weights), evalLogProbs(t, m, params)) {
		t.Error("the loaded model computes other log-probabilities")
	}
	older := m.Config()
	older.Options = map[string]float64{layers.OptionRotaryBase: 500}
	if !older.Equal(m.Config()) || !m.Config().Equal(older) {
		t.Error("a config leaving no_bias out differs from one with no_bias 0, its default")
	}
	older.Options = nil
	if older.Equal(m.Config()) {
		t.Error("a config leaving rotary_base out (10000) equals one with rotary_base 500")
	}
}
