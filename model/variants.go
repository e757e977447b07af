package model

import (
	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/layers"
)

// DecoderOnly is a GPT-style language model made of the same builders: the
// embedding, positions ("decoder.pos"), and a stack of EncoderLayers under
// a causal mask ("decoder"), with the tied projection. It models the target
// side alone (Config.DecoderLayers layers; the encoder's are unused) and
// generates continuations of prompts (NewDecoder).
type DecoderOnly struct {
	cfg   Config
	embed layers.Embedding
	pos   layers.Positional
	stack layers.Encoder
}

// NewDecoderOnly returns a decoder-only model of cfg.DecoderLayers layers
// (whatever cfg.Kind), with the built-in variants.
func NewDecoderOnly(cfg Config) (*DecoderOnly, error) {
	cfg.Kind = KindDecoderOnly
	b, err := newBuilder(cfg, nil)
	if err != nil {
		return nil, err
	}
	return b.decoderOnly()
}

// decoderOnly builds the decoder-only model.
func (b *builder) decoderOnly() (*DecoderOnly, error) {
	if b.cfg.DecoderLayers == 0 {
		return nil, errors.New("a decoder-only model needs decoder_layers > 0")
	}
	stack, err := b.encoder(b.cfg.DecoderLayers)
	if err != nil {
		return nil, err
	}
	return &DecoderOnly{cfg: b.cfg, embed: b.embed, pos: b.pos, stack: stack}, nil
}

// Config is the model's configuration.
func (m *DecoderOnly) Config() Config { return m.cfg }

// Layout is that of a model that reads targets alone.
func (m *DecoderOnly) Layout() Layout { return Layout{} }

// Build adds the model for target batches of shape sh (sources ignored).
func (m *DecoderOnly) Build(s *graph.Scope, sh Shape) (loss, logp *G.Node) {
	if err := checkShape(sh, KindDecoderOnly, false); err != nil {
		s.Fail(err)
		return nil, nil
	}
	in := newInputs(s, sh, false, true)
	return Output(s, m.Logits(s, in.tgtIn, in.tgtMask), in.tgtOut, m.cfg.LabelSmoothing)
}

// Logits maps ids [batch, len] (starting with BOS) to next-token scores
// [batch, len, vocab] under mask, the causal mask of the ids.
func (m *DecoderOnly) Logits(s *graph.Scope, ids, mask *G.Node) *G.Node {
	y := m.embed.Apply(s.In("embed"), ids)
	y = s.Dropout(m.pos.Apply(s.In("decoder", "pos"), y), m.cfg.Dropout)
	y = m.stack.Apply(s.In("decoder"), y, mask)
	return m.embed.Logits(s.In("embed"), y)
}

// Feed sets a program's inputs from a batch.
func (m *DecoderOnly) Feed(p *graph.Program, dt tensor.Dtype, b Batch) error { return Feed(p, dt, b) }

// EncoderOnly is a tagger made of the same builders: the encoder
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

// NewEncoderOnly returns an encoder-only model of cfg.EncoderLayers layers
// (whatever cfg.Kind), with the built-in variants.
func NewEncoderOnly(cfg Config) (*EncoderOnly, error) {
	cfg.Kind = KindEncoderOnly
	b, err := newBuilder(cfg, nil)
	if err != nil {
		return nil, err
	}
	return b.encoderOnly()
}

// encoderOnly builds the encoder-only model.
func (b *builder) encoderOnly() (*EncoderOnly, error) {
	if b.cfg.EncoderLayers == 0 {
		return nil, errors.New("an encoder-only model needs encoder_layers > 0")
	}
	stack, err := b.encoder(b.cfg.EncoderLayers)
	if err != nil {
		return nil, err
	}
	return &EncoderOnly{cfg: b.cfg, embed: b.embed, pos: b.pos, stack: stack}, nil
}

// Config is the model's configuration.
func (m *EncoderOnly) Config() Config { return m.cfg }

// Layout is that of a model that predicts a target at every source
// position.
func (m *EncoderOnly) Layout() Layout { return Layout{Sources: true, Aligned: true} }

// Build adds the model for batches of shape sh, whose source and target
// lengths must be equal.
func (m *EncoderOnly) Build(s *graph.Scope, sh Shape) (loss, logp *G.Node) {
	if err := checkShape(sh, KindEncoderOnly, true); err != nil {
		s.Fail(err)
		return nil, nil
	}
	if sh.SrcLen != sh.TgtLen {
		s.Fail(errors.Errorf("encoder-only model: source length %d and target length %d differ", sh.SrcLen, sh.TgtLen))
		return nil, nil
	}
	in := newInputs(s, sh, true, false)
	x := m.embed.Apply(s.In("embed"), in.src)
	x = s.Dropout(m.pos.Apply(s.In("encoder", "pos"), x), m.cfg.Dropout)
	x = m.stack.Apply(s.In("encoder"), x, in.srcMask)
	return Output(s, m.embed.Logits(s.In("embed"), x), in.tgtOut, m.cfg.LabelSmoothing)
}

// Feed sets a program's inputs from a batch.
func (m *EncoderOnly) Feed(p *graph.Program, dt tensor.Dtype, b Batch) error { return Feed(p, dt, b) }
