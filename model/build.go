package model

import (
	"maps"
	"slices"
	"strings"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/layers"
)

// FromConfig returns the model of cfg.Kind, its sublayers built from the
// variants cfg names in reg (nil: layers.NewRegistry(), the built-in
// variants). It is how a model is rebuilt from its recorded config, the
// variants a program registered in reg included: a *Transformer with the
// parts of its kind.
//
// A setting that contradicts the model built, or that it does not read, is
// an error naming the field: positions added to the embeddings of a model
// whose attention places positions itself (rotary, ALiBi), kv_heads that
// the attention does not have.
func FromConfig(cfg Config, reg *layers.Registry) (Model, error) {
	return fromConfig(cfg, reg, true)
}

// fromConfig is FromConfig, checking the settings against the model built
// if strict; a checkpoint's config is not, so that one written before
// these checks rebuilds the model it holds.
func fromConfig(cfg Config, reg *layers.Registry, strict bool) (Model, error) {
	cfg = cfg.withDefaults()
	if !slices.Contains(Kinds(), cfg.Kind) {
		return nil, errors.Errorf("model config: kind is %s, want one of %s (a model of one's own kind is built by its own code)", cfg.Kind, strings.Join(Kinds(), ", "))
	}
	m, err := newTransformer(cfg, reg)
	if err == nil && strict {
		err = m.checkSettings()
	}
	if err != nil {
		return nil, err
	}
	return m, nil
}

// checkSettings refuses settings of the config that the model's sublayers
// contradict or do not read.
func (m *Transformer) checkSettings() error {
	st := m.decoder
	if st == nil {
		st = m.encoder
	}
	attn := st.Layer.SelfAttn
	if p, ok := attn.(interface{ PlacesPositions() bool }); ok && p.PlacesPositions() && m.cfg.Positions != layers.PositionsNone {
		return errors.Errorf("invalid config: positions is %s, want none with attention %s, which places positions itself (positions added to the embeddings would count them twice)", m.cfg.Positions, m.cfg.Attention)
	}
	if kv := m.cfg.KVHeads; kv != 0 && kv != m.cfg.Heads {
		if a, ok := attn.(layers.IncrementalAttention); !ok || first(a.CacheDims()) != kv {
			return errors.Errorf("invalid config: kv_heads is %d, want 0 with attention %s, which does not share key/value heads: fewer need attention grouped-query, rotary or alibi", kv, m.cfg.Attention)
		}
	}
	return nil
}

// first is the first of two values.
func first(a, _ int) int { return a }

// newTransformer builds the model of cfg.Kind, its sublayers from the
// variants cfg names in reg (nil: the built-in ones): the encoder stack
// for a kind that reads sources, the decoder stack for one that
// generates.
func newTransformer(cfg Config, reg *layers.Registry) (*Transformer, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if reg == nil {
		reg = layers.NewRegistry()
	}
	if err := checkOptions(cfg, reg); err != nil {
		return nil, err
	}
	pos, err := reg.Positions.New(cfg.Positions, cfg.Sizes)
	if err != nil {
		return nil, errors.Wrap(err, "model config")
	}
	m := &Transformer{cfg: cfg, embed: layers.NewEmbedding(cfg.Vocab, cfg.DModel), pos: pos}
	switch cfg.Kind {
	case KindDecoderOnly:
		if cfg.DecoderLayers == 0 {
			return nil, errors.New("a decoder-only model needs decoder_layers > 0")
		}
		m.decoder, err = stack(cfg, reg, cfg.DecoderLayers, false)
	case KindEncoderOnly:
		if cfg.EncoderLayers == 0 {
			return nil, errors.New("an encoder-only model needs encoder_layers > 0")
		}
		m.encoder, err = stack(cfg, reg, cfg.EncoderLayers, false)
	default:
		if m.encoder, err = stack(cfg, reg, cfg.EncoderLayers, false); err == nil {
			m.decoder, err = stack(cfg, reg, cfg.DecoderLayers, true)
		}
	}
	if err != nil {
		return nil, err
	}
	return m, nil
}

// stack is a stack of n layers of the config's variants (decoder layers,
// attending to an encoder, if cross), with a final norm if the config is
// pre-norm.
func stack(cfg Config, reg *layers.Registry, n int, cross bool) (*layers.Stack, error) {
	l, err := reg.Layer(cfg.Sizes, cfg.Variants(), cross)
	if err != nil {
		return nil, errors.Wrap(err, "model config")
	}
	st := &layers.Stack{Layer: l, N: n}
	if cfg.PreNorm {
		st.FinalNorm, err = reg.Norm.New(cfg.Norm, cfg.Sizes)
	}
	return st, errors.Wrap(err, "model config")
}

// checkOptions refuses options that none of the config's variants
// declares, or that the one declaring it does not take, naming them.
func checkOptions(cfg Config, reg *layers.Registry) error {
	declared := map[string]layers.Option{}
	for _, opts := range [][]layers.Option{reg.Attention.Options(cfg.Attention), reg.FFN.Options(cfg.FFN),
		reg.Norm.Options(cfg.Norm), reg.Positions.Options(cfg.Positions)} {
		for _, o := range opts {
			declared[o.Name] = o
		}
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.Options)) {
		o, ok := declared[name]
		if !ok {
			return errors.Errorf("invalid config: options.%s is set, but attention %s, ffn %s, norm %s and positions %s declare %s",
				name, cfg.Attention, cfg.FFN, cfg.Norm, cfg.Positions, optionNames(declared))
		}
		if err := o.Check(cfg.Options[name]); err != nil {
			return errors.Wrap(err, "invalid config")
		}
	}
	return nil
}

// optionNames lists the options' names, or says there are none.
func optionNames(opts map[string]layers.Option) string {
	if len(opts) == 0 {
		return "no options"
	}
	return "the options " + strings.Join(slices.Sorted(maps.Keys(opts)), ", ")
}
