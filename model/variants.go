package model

import (
	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/layers"
)

// DecoderOnly is a GPT-style language model made of the same builders: the
// embedding, positions, and a stack of EncoderLayers under a causal mask, with
// the tied projection. It models the target side alone (Config.DecoderLayers
// layers; the encoder's are unused).
type DecoderOnly struct {
	cfg   Config
	embed layers.Embedding
	pos   layers.Positional
	stack layers.Encoder
}

// NewDecoderOnly returns a decoder-only model of cfg.DecoderLayers layers.
func NewDecoderOnly(cfg Config) (*DecoderOnly, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.DecoderLayers == 0 {
		return nil, errors.New("a decoder-only model needs decoder_layers > 0")
	}
	return &DecoderOnly{
		cfg:   cfg,
		embed: layers.NewEmbedding(cfg.Vocab, cfg.DModel),
		pos:   positional(cfg),
		stack: layers.Encoder{
			Layer: layers.EncoderLayer{Sizes: cfg.sizes()},
			Stack: layers.Stack{N: cfg.DecoderLayers, FinalNorm: cfg.PreNorm},
		},
	}, nil
}

// Config is the model's configuration.
func (m *DecoderOnly) Config() Config { return m.cfg }

// Build adds the model for target batches of shape sh (sources ignored).
func (m *DecoderOnly) Build(s *graph.Scope, sh Shape) (loss, logp *G.Node) {
	in := newInputs(s, sh, false, true)
	y := m.embed.Apply(s.In("embed"), in.tgtIn)
	y = s.Dropout(m.pos.Apply(s.In("decoder", "pos"), y), m.cfg.Dropout)
	y = m.stack.Apply(s.In("decoder"), y, in.tgtMask)
	return output(s, m.embed.Logits(s.In("embed"), y), in.tgtOut, m.cfg.LabelSmoothing)
}

// Feed sets a program's inputs from a batch.
func (m *DecoderOnly) Feed(p *graph.Program, dt tensor.Dtype, b Batch) error { return feed(p, dt, b) }

// EncoderOnly is a BERT-style model made of the same builders: the encoder
// stack reads the whole source (padding mask, no causal mask) and predicts a
// target token at every source position with the tied projection, for tasks
// where source and target align (tagging, the copy task). It uses
// Config.EncoderLayers layers.
type EncoderOnly struct {
	cfg   Config
	embed layers.Embedding
	pos   layers.Positional
	stack layers.Encoder
}

// NewEncoderOnly returns an encoder-only model of cfg.EncoderLayers layers.
func NewEncoderOnly(cfg Config) (*EncoderOnly, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.EncoderLayers == 0 {
		return nil, errors.New("an encoder-only model needs encoder_layers > 0")
	}
	return &EncoderOnly{
		cfg:   cfg,
		embed: layers.NewEmbedding(cfg.Vocab, cfg.DModel),
		pos:   positional(cfg),
		stack: layers.Encoder{
			Layer: layers.EncoderLayer{Sizes: cfg.sizes()},
			Stack: layers.Stack{N: cfg.EncoderLayers, FinalNorm: cfg.PreNorm},
		},
	}, nil
}

// Config is the model's configuration.
func (m *EncoderOnly) Config() Config { return m.cfg }

// Build adds the model for batches of shape sh, whose source and target
// lengths must be equal.
func (m *EncoderOnly) Build(s *graph.Scope, sh Shape) (loss, logp *G.Node) {
	if sh.SrcLen != sh.TgtLen {
		s.Fail(errors.Errorf("encoder-only model: source length %d and target length %d differ", sh.SrcLen, sh.TgtLen))
		return nil, nil
	}
	in := newInputs(s, sh, true, false)
	x := m.embed.Apply(s.In("embed"), in.src)
	x = s.Dropout(m.pos.Apply(s.In("encoder", "pos"), x), m.cfg.Dropout)
	x = m.stack.Apply(s.In("encoder"), x, in.srcMask)
	return output(s, m.embed.Logits(s.In("embed"), x), in.tgtOut, m.cfg.LabelSmoothing)
}

// Feed sets a program's inputs from a batch.
func (m *EncoderOnly) Feed(p *graph.Program, dt tensor.Dtype, b Batch) error { return feed(p, dt, b) }
