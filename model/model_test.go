package model

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
)

// paperCount counts a shared-vocabulary encoder-decoder's parameters from the
// formulas of its parts, independently of the builders.
func paperCount(c Config) int {
	d, f := c.DModel, c.DFF
	attn := 4 * (d*d + d)
	ffn := d*f + f + f*d + d
	norm := 2 * d
	return c.Vocab*d + c.EncoderLayers*(attn+ffn+2*norm) + c.DecoderLayers*(2*attn+ffn+3*norm)
}

func TestPresetParameterCounts(t *testing.T) {
	tests := []struct {
		preset string
		vocab  int
		want   int // 0: the formula's count
	}{
		{"base", 37000, 63082496}, // the paper's "65M"
		{"big", 37000, 214245376}, // the paper's "213M"
		{"tiny", 1000, 0},
		{"small", 8000, 0},
	}
	for _, tc := range tests {
		t.Run(tc.preset, func(t *testing.T) {
			cfg, err := Preset(tc.preset, tc.vocab)
			if err != nil {
				t.Fatal(err)
			}
			m, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			params, err := ParamShapes(m)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want
			if want == 0 {
				want = paperCount(cfg)
			}
			if got := params.Count(); got != want || paperCount(cfg) != want {
				t.Fatalf("%d parameters (formula %d), want %d", got, paperCount(cfg), want)
			}
			if s := Summary(params); !strings.HasSuffix(s, "parameters: "+strconv.Itoa(want)+"\n") {
				t.Fatalf("summary does not end with the count:\n%s", s)
			}
		})
	}
}

func TestConfigValidation(t *testing.T) {
	base, _ := Preset("tiny", 100)
	tests := []struct {
		name   string
		change func(c *Config)
		want   string
	}{
		{"heads divide d_model", func(c *Config) { c.Heads = 3 }, "heads is 3, want a divisor of d_model 128"},
		{"heads above d_model", func(c *Config) { c.DModel, c.Heads = 4, 8 }, "heads is 8"},
		{"positive d_ff", func(c *Config) { c.DFF = 0 }, "d_ff"},
		{"dropout below 1", func(c *Config) { c.Dropout = 1 }, "dropout"},
		{"negative dropout", func(c *Config) { c.AttnDropout = -0.1 }, "attn_dropout"},
		{"label smoothing", func(c *Config) { c.LabelSmoothing = 1.2 }, "label_smoothing"},
		{"norm name", func(c *Config) { c.Norm = "" }, "norm is , want a registered name"},
		{"positions name", func(c *Config) { c.Positions = "rot ary" }, "positions is rot ary"},
		{"ffn name", func(c *Config) { c.FFN = "swi\tglu" }, "ffn is swi"},
		{"kind", func(c *Config) { c.Kind = "seq 2 seq" }, "kind is seq 2 seq, want a name without spaces, such as encoder-decoder, decoder-only, encoder-only"},
		{"vocabulary", func(c *Config) { c.Vocab = 4 }, "vocab"},
		{"some layers", func(c *Config) { c.EncoderLayers, c.DecoderLayers = 0, 0 }, "at least one layer"},
		{"huge vocabulary", func(c *Config) { c.Vocab = 1e12 }, "vocab is 1000000000000, want in [5, 16777216]"},
		{"huge d_ff", func(c *Config) { c.DFF = 1e12 }, "d_ff is 1000000000000"},
		{"huge d_model", func(c *Config) { c.DModel, c.Heads = 1<<40, 1 }, "d_model is 1099511627776"},
		{"huge max_len", func(c *Config) { c.MaxLen = 1e12 }, "max_len is 1000000000000"},
		{"a billion layers", func(c *Config) { c.EncoderLayers = 1e9 }, "encoder_layers is 1000000000"},
		{"negative layers", func(c *Config) { c.DecoderLayers = -1 }, "decoder_layers is -1"},
		{"NaN dropout", func(c *Config) { c.Dropout = math.NaN() }, "dropout is NaN"},
		{"NaN label smoothing", func(c *Config) { c.LabelSmoothing = math.NaN() }, "label_smoothing is NaN"},
		{"NaN eps", func(c *Config) { c.Eps = math.NaN() }, "norm_eps is NaN"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := base
			tc.change(&c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one mentioning %q", err, tc.want)
			}
		})
	}
	for _, tc := range []struct {
		change func(c *Config)
		want   string
	}{
		{func(c *Config) { c.Attention = "rotary" }, "positions is sinusoidal, want none with attention rotary"},
		{func(c *Config) { c.Attention = "alibi" }, "positions is sinusoidal, want none with attention alibi"},
		{func(c *Config) { c.KVHeads = 2 }, "kv_heads is 2, want 0 with attention multi-head"},
	} {
		c := base
		tc.change(&c)
		if _, err := FromConfig(c, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want one mentioning %q", err, tc.want)
		}
	}
	other := base
	other.Kind = "seq2seq"
	if _, err := FromConfig(other, nil); err == nil || !strings.Contains(err.Error(), "kind is seq2seq, want one of encoder-decoder, decoder-only, encoder-only") {
		t.Fatalf("unknown kind: %v", err)
	}
	if _, err := Preset("huge", 100); err == nil || !strings.Contains(err.Error(), "base, big, small, tiny") {
		t.Fatalf("unknown preset: %v", err)
	}
}

func TestConfigFile(t *testing.T) {
	dir := t.TempDir()
	base, _ := Preset("small", 500)
	base.PreNorm = true
	path := filepath.Join(dir, "config.json")
	if err := base.Save(path); err != nil {
		t.Fatal(err)
	}
	got, err := LoadConfig(path, Config{})
	if err != nil || !got.Equal(base) {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	if err := os.WriteFile(path, []byte(`{"heads": 5}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadConfig(path, base); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("invalid override: %v", err)
	}
	if err := os.WriteFile(path, []byte(`{"dmodel": 5}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadConfig(path, base); err == nil || !strings.Contains(err.Error(), "dmodel") {
		t.Fatalf("unknown field: %v", err)
	}
}

// smallConfig is a model small enough for finite differences.
func smallConfig() Config {
	c, _ := Preset("tiny", 11)
	c.DModel, c.Heads, c.DFF, c.EncoderLayers, c.DecoderLayers = 8, 2, 12, 1, 1
	return c
}

// testBatch has ragged rows: padding in sources and targets.
var testBatch = Batch{
	Shape:  Shape{Batch: 2, SrcLen: 4, TgtLen: 3},
	Src:    []int{5, 6, 7, 2, 8, 2, 0, 0},
	TgtIn:  []int{1, 9, 10, 1, 4, 0},
	TgtOut: []int{9, 10, 2, 4, 2, 0},
}

func TestModelGradients(t *testing.T) {
	pre := smallConfig()
	pre.PreNorm, pre.Norm, pre.Positions = true, "rms", "learned"
	models := []struct {
		name string
		new  func(Config) (Model, error)
		cfg  Config
		b    Batch
	}{
		{"encoder-decoder", func(c Config) (Model, error) { return New(c) }, smallConfig(), testBatch},
		{"encoder-decoder, pre-norm, rms, learned positions", func(c Config) (Model, error) { return New(c) }, pre, testBatch},
		{"decoder-only", func(c Config) (Model, error) { return NewDecoderOnly(c) }, pre, testBatch},
		{"encoder-only", func(c Config) (Model, error) { return NewEncoderOnly(c) }, smallConfig(),
			Batch{Shape: Shape{Batch: 1, SrcLen: 3, TgtLen: 3}, Src: []int{5, 6, 0}, TgtIn: []int{1, 5, 0}, TgtOut: []int{6, 5, 0}}},
	}
	for _, tc := range models {
		t.Run(tc.name, func(t *testing.T) {
			m, err := tc.new(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			c := graph.GradCheck{
				Build: func(s *graph.Scope) *G.Node { loss, _ := m.Build(s, tc.b.Shape); return loss },
				Set:   func(p *graph.Program) error { return m.Feed(p, tc.b) },
				Train: true, Seed: 3, MaxPerParam: 6,
			}
			if err := c.Run(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestBuildChecksTheShape compiles each kind for batch shapes it cannot
// read (joined batches have no sources): an error naming the kind and the
// shape, not a panic while the graph is built.
func TestBuildChecksTheShape(t *testing.T) {
	cfg := smallConfig()
	enc, _ := New(cfg)
	lm, _ := NewDecoderOnly(cfg)
	tagger, _ := NewEncoderOnly(cfg)
	tests := []struct {
		m    Model
		sh   Shape
		want string
	}{
		{enc, Shape{Batch: 2, SrcLen: 0, TgtLen: 4}, "a model of kind encoder-decoder needs rows, source positions and target positions, have a batch of shape 2x0x4"},
		{enc, Shape{Batch: 2, SrcLen: 3, TgtLen: 0}, "have a batch of shape 2x3x0"},
		{lm, Shape{Batch: 2, SrcLen: 0, TgtLen: 0}, "a model of kind decoder-only needs rows and target positions, have a batch of shape 2x0x0"},
		{lm, Shape{Batch: 0, SrcLen: 0, TgtLen: 4}, "have a batch of shape 0x0x4"},
		{tagger, Shape{Batch: 2, SrcLen: 0, TgtLen: 0}, "a model of kind encoder-only needs rows, source positions and target positions"},
	}
	for _, tc := range tests {
		params, err := NewParams(tc.m, tensor.Float32, rand.New(rand.NewPCG(1, 1)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := CompileTrain(nil, tc.m, params, tc.sh, rand.New(rand.NewPCG(1, 1))); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%T, shape %v: error %v, want one saying %q", tc.m, tc.sh, err, tc.want)
		}
		if _, err := CompileEval(nil, tc.m, params, tc.sh); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%T, shape %v, evaluation: error %v, want one saying %q", tc.m, tc.sh, err, tc.want)
		}
	}
	// A decoder-only model ignores sources: joined batches have none.
	params, err := NewParams(lm, tensor.Float32, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	p, err := CompileTrain(nil, lm, params, Shape{Batch: 2, TgtLen: 4}, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	p.Close()
}

// TestEnded: a source ends with EOSID once, and the caller's slice is
// never written.
func TestEnded(t *testing.T) {
	for _, tc := range []struct{ src, want []int }{
		{nil, nil},
		{[]int{8, 8, 6}, []int{8, 8, 6, EOSID}},
		{[]int{8, 8, 6, EOSID}, []int{8, 8, 6, EOSID}},
		{[]int{EOSID}, []int{EOSID}},
	} {
		src := append(make([]int, 0, len(tc.src)+4), tc.src...) // room to append in place
		before := slices.Clone(src[:cap(src)])
		if got := Ended(src); !slices.Equal(got, tc.want) {
			t.Errorf("Ended(%v) = %v, want %v", tc.src, got, tc.want)
		}
		if !slices.Equal(src[:cap(src)], before) {
			t.Errorf("Ended(%v) wrote the caller's backing array", tc.src)
		}
	}
}

// TestStacksOfEachKind: a model without an encoder (or a decoder) is
// described without it, trimmed of the preset's layers for it, and equal to
// the config that still has them (an older run's).
func TestStacksOfEachKind(t *testing.T) {
	for _, c := range []struct {
		kind, idle, stacks string
		enc, dec           int
	}{
		{KindEncoderDecoder, "", "2+2 layers", 2, 2},
		{KindDecoderOnly, "encoder_layers", "2 decoder layers", 0, 2},
		{KindEncoderOnly, "decoder_layers", "2 encoder layers", 2, 0},
	} {
		cfg, err := Preset("tiny", 40)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Kind = c.kind
		trimmed := cfg.Trimmed()
		if cfg.IdleLayers() != c.idle || trimmed.Stacks() != c.stacks || trimmed.EncoderLayers != c.enc || trimmed.DecoderLayers != c.dec {
			t.Errorf("%s: idle %q, %q, %d+%d layers; want %q, %q, %d+%d", c.kind, cfg.IdleLayers(), trimmed.Stacks(),
				trimmed.EncoderLayers, trimmed.DecoderLayers, c.idle, c.stacks, c.enc, c.dec)
		}
		if !trimmed.Equal(cfg) {
			t.Errorf("%s: trimmed of its idle stack, not Equal to the preset's config", c.kind)
		}
	}
}
