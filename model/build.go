package model

import (
	"maps"
	"slices"
	"strings"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/layers"
)

// FromConfig returns the model of cfg.Kind, a *Transformer with the parts
// of its kind, its sublayers built from the variants cfg names in reg, a
// program's own registered ones included (nil: layers.NewRegistry()).
//
// A setting that contradicts the model built, or that it does not read, is
// an error naming the field: positions added to the embeddings of a model
// whose attention places positions itself (rotary, ALiBi), kv_heads that
// the attention does not have.
func FromConfig(cfg Config, reg *layers.Registry) (Model, error) {
	return asModel(newTransformer(cfg, reg, true))
}

// Rebuild is FromConfig for a config that a checkpoint recorded: it does
// not refuse the settings that FromConfig's checks refuse, so that a
// checkpoint written before those checks rebuilds the model it holds.
func Rebuild(cfg Config, reg *layers.Registry) (Model, error) {
	return asModel(newTransformer(cfg, reg, false))
}

// asModel is m as a Model, nil (not a nil *Transformer) with an error.
func asModel(m *Transformer, err error) (Model, error) {
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
		if g, ok := attn.(interface{ KeyValueHeads() int }); !ok || g.KeyValueHeads() != kv {
			return errors.Errorf("invalid config: kv_heads is %d, want 0 with attention %s, which does not share key/value heads: fewer need attention grouped-query, rotary or alibi", kv, m.cfg.Attention)
		}
	}
	return nil
}

// newTransformer builds the model of cfg.Kind (FromConfig), refusing what
// checkSettings refuses if strict (not for Rebuild).
func newTransformer(cfg Config, reg *layers.Registry, strict bool) (*Transformer, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if !slices.Contains(Kinds(), cfg.Kind) {
		return nil, errors.Errorf("model config: kind is %s, want one of %s (a model of one's own kind is built by its own code)", cfg.Kind, strings.Join(Kinds(), ", "))
	}
	if reg == nil {
		reg = layers.NewRegistry()
	}
	var err error
	if cfg.Options, err = options(cfg, reg); err != nil {
		return nil, err
	}
	pos, err := reg.Positions.New(cfg.Positions, cfg.Sizes)
	if err != nil {
		return nil, errors.Wrap(err, "model config")
	}
	m := &Transformer{cfg: cfg, embed: layers.NewEmbedding(cfg.Vocab, cfg.DModel), pos: pos}
	l := KindLayout(cfg.Kind)
	switch {
	case l.Aligned && cfg.EncoderLayers == 0:
		return nil, errors.New("an encoder-only model needs encoder_layers > 0")
	case !l.Sources && cfg.DecoderLayers == 0:
		return nil, errors.New("a decoder-only model needs decoder_layers > 0")
	}
	if l.Sources {
		m.encoder, err = stack(cfg, reg, cfg.EncoderLayers, false)
	}
	if !l.Aligned && err == nil {
		m.decoder, err = stack(cfg, reg, cfg.DecoderLayers, l.Sources)
	}
	if err == nil && strict {
		err = m.checkSettings()
	}
	if err != nil {
		return nil, err
	}
	return m, nil
}

// stack is n layers of the config's variants (decoder layers attending to
// an encoder if cross), with a final norm if the config is pre-norm.
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

// options returns every option the config's variants declare in reg, those
// it leaves out at their defaults, so that the model's config (and the
// checkpoints that record it) say what it was built with. A variant reg
// lacks, then an option no variant declares or takes, is an error naming it.
func options(cfg Config, reg *layers.Registry) (map[string]float64, error) {
	for _, err := range []error{reg.Attention.Known(cfg.Attention), reg.FFN.Known(cfg.FFN),
		reg.Norm.Known(cfg.Norm), reg.Positions.Known(cfg.Positions)} {
		if err != nil {
			return nil, errors.Errorf("model config: %v (a variant of one's own is built from the registry it is registered in: pass that registry to FromConfig, checkpoint.Load, or inference.Load with inference.WithRegistry)", err)
		}
	}
	declared, all := map[string]layers.Option{}, map[string]float64{}
	for _, opts := range [][]layers.Option{reg.Attention.Options(cfg.Attention), reg.FFN.Options(cfg.FFN),
		reg.Norm.Options(cfg.Norm), reg.Positions.Options(cfg.Positions)} {
		for _, o := range opts {
			declared[o.Name], all[o.Name] = o, o.Default
		}
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.Options)) {
		o, ok := declared[name]
		if !ok {
			return nil, errors.Errorf("invalid config: options.%s is set, but attention %s, ffn %s, norm %s and positions %s declare %s (a config copied from a model records the options of its variants: remove those of others)",
				name, cfg.Attention, cfg.FFN, cfg.Norm, cfg.Positions, optionNames(declared))
		}
		if err := o.Check(cfg.Options[name]); err != nil {
			return nil, errors.Wrap(err, "invalid config")
		}
	}
	if len(all) == 0 {
		return nil, nil
	}
	maps.Copy(all, cfg.Options)
	return all, nil
}

// optionNames lists the options' names, or says there are none.
func optionNames(opts map[string]layers.Option) string {
	if len(opts) == 0 {
		return "no options"
	}
	return "the options " + strings.Join(slices.Sorted(maps.Keys(opts)), ", ")
}
