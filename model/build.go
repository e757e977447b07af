package model

import (
	"strings"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/layers"
)

// FromConfig returns the model of cfg.Kind, its sublayers built from the
// variants cfg names in reg (nil: layers.NewRegistry(), the built-in
// variants). It is how a model is rebuilt from its recorded config, the
// variants a program registered in reg included: *Transformer,
// *DecoderOnly or *EncoderOnly.
func FromConfig(cfg Config, reg *layers.Registry) (Model, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	return fromConfig(cfg, reg)
}

// fromConfig is FromConfig for a valid config that may hold settings
// Check refuses: a checkpoint's, written before they were refused.
func fromConfig(cfg Config, reg *layers.Registry) (Model, error) {
	b, err := newBuilder(cfg, reg)
	if err != nil {
		return nil, err
	}
	switch b.cfg.Kind {
	case KindDecoderOnly:
		return b.decoderOnly()
	case KindEncoderOnly:
		return b.encoderOnly()
	case KindEncoderDecoder:
		return b.transformer()
	}
	return nil, errors.Errorf("model config: kind is %s, want one of %s (a model of one's own kind is built by its own code)", b.cfg.Kind, strings.Join(Kinds(), ", "))
}

// builder makes a model's parts from a valid config and a registry.
type builder struct {
	cfg   Config
	reg   *layers.Registry
	embed layers.Embedding
	pos   layers.Positional
}

// newBuilder validates cfg (filling the defaults of older configs) and
// builds the parts every kind has: the embedding and the positions.
func newBuilder(cfg Config, reg *layers.Registry) (*builder, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if reg == nil {
		reg = layers.NewRegistry()
	}
	pos, err := reg.Positions.New(cfg.Positions, cfg.Sizes())
	if err != nil {
		return nil, errors.Wrap(err, "model config")
	}
	return &builder{cfg: cfg, reg: reg, embed: layers.NewEmbedding(cfg.Vocab, cfg.DModel), pos: pos}, nil
}

// stack is a stack of n layers, with a final norm if the config is pre-norm.
func (b *builder) stack(n int) (layers.Stack, error) {
	st := layers.Stack{N: n}
	if !b.cfg.PreNorm {
		return st, nil
	}
	var err error
	st.FinalNorm, err = b.reg.Norm.New(b.cfg.Norm, b.cfg.Sizes())
	return st, errors.Wrap(err, "model config")
}

// encoder is a stack of n encoder layers (the layers of a decoder-only
// model too).
func (b *builder) encoder(n int) (layers.Encoder, error) {
	st, err := b.stack(n)
	if err != nil {
		return layers.Encoder{}, err
	}
	l, err := b.reg.EncoderLayer(b.cfg.Sizes(), b.cfg.Variants())
	return layers.Encoder{Layer: l, Stack: st}, errors.Wrap(err, "model config")
}

// decoder is a stack of n decoder layers.
func (b *builder) decoder(n int) (layers.Decoder, error) {
	st, err := b.stack(n)
	if err != nil {
		return layers.Decoder{}, err
	}
	l, err := b.reg.DecoderLayer(b.cfg.Sizes(), b.cfg.Variants())
	return layers.Decoder{Layer: l, Stack: st}, errors.Wrap(err, "model config")
}
