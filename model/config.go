package model

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/internal/atomicfile"
	"github.com/transformer-go/transformer/internal/strictjson"
	"github.com/transformer-go/transformer/layers"
)

// Config describes a Transformer. The zero value is not valid: start from a
// preset (Preset) and change what you need, then Validate.
type Config struct {
	// Kind is the model kind FromConfig builds: KindEncoderDecoder (the
	// paper's, also when empty, as in older configs), KindDecoderOnly or
	// KindEncoderOnly.
	Kind string `json:"kind"`
	// Vocab is the size of the shared source and target vocabulary.
	Vocab int `json:"vocab"`
	// Sizes are what every layer is built from: d_model, heads, d_ff,
	// dropout, attn_dropout, norm_eps, pre_norm, max_len (bounding every
	// sequence: sources, prompts and outputs), kv_heads and the variants'
	// options ("rotary_base" and "no_bias" of attention "rotary", …; one
	// that no variant of the config declares is an error).
	layers.Sizes
	// EncoderLayers and DecoderLayers are N for each stack.
	EncoderLayers int `json:"encoder_layers"`
	DecoderLayers int `json:"decoder_layers"`
	// LabelSmoothing is ε of the training loss, in [0, 1).
	LabelSmoothing float64 `json:"label_smoothing"`
	// Attention, FFN, Norm and Positions name the sublayers in the
	// layers.Registry the model is built with (see FromConfig): built in
	// are attention "multi-head", "grouped-query", "rotary" or "alibi",
	// ffn "relu" or "swiglu", norm "layer" or "rms" and positions
	// "sinusoidal", "learned" or "none"; a program may register its own.
	// Empty Attention and FFN mean "multi-head" and "relu".
	Attention string `json:"attention"`
	FFN       string `json:"ffn"`
	Norm      string `json:"norm"`
	Positions string `json:"positions"`
}

// Equal reports whether c and o describe the same model. An option of a
// built-in variant that one leaves out stands for its default, and the
// layers of a stack the kind lacks (IdleLayers) build nothing.
func (c Config) Equal(o Config) bool {
	full := func(c Config) Config {
		c = c.withDefaults().Trimmed()
		if opts, err := options(c, layers.NewRegistry()); err == nil {
			c.Options = opts
		}
		return c
	}
	return reflect.DeepEqual(full(c), full(o))
}

// The model kinds a Config can describe.
const (
	KindEncoderDecoder = "encoder-decoder" // Transformer, the paper's
	KindDecoderOnly    = "decoder-only"    // a decoder alone: a GPT-style language model
	KindEncoderOnly    = "encoder-only"    // an encoder alone: a tagger, a target token at every source position
)

// KindLayout is how a model of the built-in kind reads batches (its
// Layout), known before the model is built: a command decides from it how
// to lay out its data.
func KindLayout(kind string) Layout {
	return map[string]Layout{KindEncoderDecoder: {Sources: true}, KindEncoderOnly: {Sources: true, Aligned: true}}[kind]
}

// IdleLayers names the layer count of the stack c's kind lacks:
// "encoder_layers" of a decoder-only model, "decoder_layers" of an
// encoder-only one, "" for an encoder-decoder. Its value builds nothing.
func (c Config) IdleLayers() string {
	l := KindLayout(c.withDefaults().Kind)
	switch {
	case !l.Sources:
		return "encoder_layers"
	case l.Aligned:
		return "decoder_layers"
	}
	return ""
}

// Trimmed is c with the layers of the stack its kind lacks (IdleLayers)
// at 0: what describes its model, as a run's config.json.
func (c Config) Trimmed() Config {
	switch c.IdleLayers() {
	case "encoder_layers":
		c.EncoderLayers = 0
	case "decoder_layers":
		c.DecoderLayers = 0
	}
	return c
}

// Stacks says how many layers c's stacks have: "2+2 layers" (encoder and
// decoder), "2 decoder layers" or "2 encoder layers".
func (c Config) Stacks() string {
	switch c.IdleLayers() {
	case "encoder_layers":
		return fmt.Sprintf("%d decoder layers", c.DecoderLayers)
	case "decoder_layers":
		return fmt.Sprintf("%d encoder layers", c.EncoderLayers)
	}
	return fmt.Sprintf("%d+%d layers", c.EncoderLayers, c.DecoderLayers)
}

// Kinds lists the model kinds.
func Kinds() []string { return []string{KindEncoderDecoder, KindDecoderOnly, KindEncoderOnly} }

// withDefaults fills the fields a config may leave empty: Kind, Attention
// and FFN.
func (c Config) withDefaults() Config {
	if c.Kind == "" {
		c.Kind = KindEncoderDecoder
	}
	if c.Attention == "" {
		c.Attention = layers.AttentionMultiHead
	}
	if c.FFN == "" {
		c.FFN = layers.FFNReLU
	}
	if len(c.Options) == 0 {
		c.Options = nil
	}
	return c
}

// presets are the named configurations: the paper's base and big models
// (table 3) and two small ones that train on a laptop.
var presets = map[string]Config{
	"tiny":  {Sizes: layers.Sizes{DModel: 128, Heads: 4, DFF: 512, Dropout: 0.1}, EncoderLayers: 2, DecoderLayers: 2},
	"small": {Sizes: layers.Sizes{DModel: 256, Heads: 8, DFF: 1024, Dropout: 0.1}, EncoderLayers: 3, DecoderLayers: 3},
	"base":  {Sizes: layers.Sizes{DModel: 512, Heads: 8, DFF: 2048, Dropout: 0.1}, EncoderLayers: 6, DecoderLayers: 6},
	"big":   {Sizes: layers.Sizes{DModel: 1024, Heads: 16, DFF: 4096, Dropout: 0.3}, EncoderLayers: 6, DecoderLayers: 6},
}

// PresetNames lists the presets: base, big, small, tiny.
func PresetNames() []string { return slices.Sorted(maps.Keys(presets)) }

// Preset returns the named configuration for a vocabulary of the given size,
// with the paper's other settings: label smoothing 0.1, post-norm LayerNorm
// (eps 1e-5), the paper's multi-head attention and feed-forward network,
// sinusoidal positions and MaxLen 1024; Kind is KindEncoderDecoder.
func Preset(name string, vocab int) (Config, error) {
	c, ok := presets[name]
	if !ok {
		return Config{}, errors.Errorf("unknown preset %q: want one of %s", name, strings.Join(PresetNames(), ", "))
	}
	c.Kind, c.Vocab, c.LabelSmoothing, c.Eps, c.MaxLen = KindEncoderDecoder, vocab, 0.1, 1e-5, 1024
	c.Attention, c.FFN, c.Norm, c.Positions = layers.AttentionMultiHead, layers.FFNReLU, layers.NormLayer, layers.PositionsSinusoid
	return c, c.Validate()
}

// Validate reports the first thing wrong with c, naming the field and its
// value: sizes out of range (see MaxVocab and the other limits), heads that
// do not divide d_model, rates outside [0, 1) or NaN, a kind or variant name
// that is empty or holds spaces. FromConfig checks the names in its registry.
func (c Config) Validate() error {
	checks := []struct {
		bad   bool
		field string
		value any
		want  string
	}{
		{!variantName(c.Kind, true), "kind", c.Kind, "a name without spaces, such as " + strings.Join(Kinds(), ", ")},
		{c.Vocab < MinVocab || c.Vocab > MaxVocab, "vocab", c.Vocab, fmt.Sprintf("in [%d, %d]: the 4 reserved tokens and at least one more", MinVocab, MaxVocab)},
		{c.DModel <= 0 || c.DModel > MaxDModel, "d_model", c.DModel, fmt.Sprintf("in [1, %d]", MaxDModel)},
		{c.Heads <= 0 || c.Heads > c.DModel || c.DModel%c.Heads != 0, "heads", c.Heads, fmt.Sprintf("a divisor of d_model %d", c.DModel)},
		{c.KVHeads < 0 || c.KVHeads > c.Heads || c.KVHeads > 0 && c.Heads%c.KVHeads != 0, "kv_heads", c.KVHeads, fmt.Sprintf("0 or a divisor of heads %d", c.Heads)},
		{c.DFF <= 0 || c.DFF > MaxDFF, "d_ff", c.DFF, fmt.Sprintf("in [1, %d]", MaxDFF)},
		{c.EncoderLayers < 0 || c.EncoderLayers > MaxLayers, "encoder_layers", c.EncoderLayers, fmt.Sprintf("in [0, %d]", MaxLayers)},
		{c.DecoderLayers < 0 || c.DecoderLayers > MaxLayers, "decoder_layers", c.DecoderLayers, fmt.Sprintf("in [0, %d]", MaxLayers)},
		{c.EncoderLayers+c.DecoderLayers == 0, "decoder_layers", c.DecoderLayers, "at least one layer in the model"},
		{!inUnit(c.Dropout), "dropout", c.Dropout, "in [0, 1)"},
		{!inUnit(c.AttnDropout), "attn_dropout", c.AttnDropout, "in [0, 1)"},
		{!inUnit(c.LabelSmoothing), "label_smoothing", c.LabelSmoothing, "in [0, 1)"},
		{!variantName(c.Attention, true), "attention", c.Attention, "a registered name, such as multi-head"},
		{!variantName(c.FFN, true), "ffn", c.FFN, "a registered name, such as relu"},
		{!variantName(c.Norm, false), "norm", c.Norm, "a registered name, such as layer or rms"},
		{!(c.Eps > 0 && c.Eps < 1), "norm_eps", c.Eps, "in (0, 1)"},
		{!variantName(c.Positions, false), "positions", c.Positions, "a registered name, such as sinusoidal, learned or none"},
		{c.MaxLen <= 0 || c.MaxLen > MaxMaxLen, "max_len", c.MaxLen, fmt.Sprintf("in [1, %d]", MaxMaxLen)},
	}
	for _, ch := range checks {
		if ch.bad {
			return errors.Errorf("invalid config: %s is %v, want %s", ch.field, ch.value, ch.want)
		}
	}
	return nil
}

// variantName reports whether name can name a variant: not empty (unless
// empty may stand for the default) and without spaces.
func variantName(name string, empty bool) bool {
	return (empty || name != "") && !strings.ContainsAny(name, " \t\n")
}

// inUnit reports whether x is in [0, 1); NaN is not.
func inUnit(x float64) bool { return x >= 0 && x < 1 }

// Variants names the config's sublayers (empty ones filled with the
// defaults) for a layers.Registry.
func (c Config) Variants() layers.Variants {
	c = c.withDefaults()
	return layers.Variants{Attention: c.Attention, FFN: c.FFN, Norm: c.Norm, Positions: c.Positions}
}

// ParseConfig parses a config recorded in JSON (a checkpoint's), refusing
// unknown fields and anything after the object, fills the fields that
// configs written before they existed leave empty, and validates it.
func ParseConfig(raw []byte) (Config, error) {
	var cfg Config
	if err := strictjson.Decode(raw, &cfg); err != nil {
		return cfg, errors.Wrap(err, "config")
	}
	cfg = cfg.withDefaults()
	return cfg, cfg.Validate()
}

// LoadConfig reads a JSON config file and validates it. Fields missing from the
// file keep the values of base, so a file may hold only overrides of a preset.
func LoadConfig(path string, base Config) (Config, error) {
	data, err := strictjson.ReadFile(path)
	if err != nil {
		return Config{}, errors.Wrap(err, "reading config")
	}
	c := base
	if err := strictjson.Decode(data, &c); err != nil {
		return Config{}, errors.Wrapf(err, "config %s", path)
	}
	return c, errors.Wrapf(c.Validate(), "config %s", path)
}

// Save writes c as indented JSON, atomically.
func (c Config) Save(path string) error {
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return errors.Wrap(err, "encoding config")
	}
	return atomicfile.WriteBytes(path, append(data, '\n'))
}
