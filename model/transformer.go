package model

import (
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/layers"
)

// The reserved token ids every model and batch use (as package data does).
const (
	PadID = 0 // padding, masked everywhere
	BOSID = 1 // starts every decoder input
	EOSID = 2 // ends every source and target
)

// Transformer is the paper's encoder-decoder model (figure 1), built from the
// layers package: a shared embedding, positional encodings, an encoder and a
// decoder stack, and the pre-softmax projection tied to the embedding.
type Transformer struct {
	cfg     Config
	embed   layers.Embedding
	pos     layers.Positional
	encoder layers.Encoder
	decoder layers.Decoder
}

// New returns the encoder-decoder model described by cfg (whatever its
// Kind), with the built-in variants; FromConfig builds any kind, with
// variants of one's own.
func New(cfg Config) (*Transformer, error) {
	cfg.Kind = KindEncoderDecoder
	b, err := newBuilder(cfg, nil)
	if err != nil {
		return nil, err
	}
	return b.transformer()
}

// transformer builds the encoder-decoder.
func (b *builder) transformer() (*Transformer, error) {
	enc, err := b.encoder(b.cfg.EncoderLayers)
	if err != nil {
		return nil, err
	}
	dec, err := b.decoder(b.cfg.DecoderLayers)
	if err != nil {
		return nil, err
	}
	return &Transformer{cfg: b.cfg, embed: b.embed, pos: b.pos, encoder: enc, decoder: dec}, nil
}

// Config is the model's configuration.
func (m *Transformer) Config() Config { return m.cfg }

// Layout is that of a model that reads sources and targets.
func (m *Transformer) Layout() Layout { return Layout{Sources: true} }

// encode maps source ids [batch, lenS] to the encoder's output
// [batch, lenS, dModel]; srcMask is PaddingMask of the sources.
func (m *Transformer) encode(s *graph.Scope, src, srcMask *G.Node) *G.Node {
	x := m.embed.Apply(s.In("embed"), src)
	x = s.Dropout(m.pos.Apply(s.In("encoder", "pos"), x), m.cfg.Dropout)
	return m.encoder.Apply(s.In("encoder"), x, srcMask)
}

// Decode maps target ids [batch, lenT] (starting with BOS) and the encoder's
// output to next-token scores (logits) [batch, lenT, vocab]:
//
//	Decoder(y, memory) · Eᵀ
//
// whose log softmax is the next-token log-probabilities.
func (m *Transformer) Decode(s *graph.Scope, tgt, memory, tgtMask, srcMask *G.Node) *G.Node {
	y := m.embed.Apply(s.In("embed"), tgt)
	y = s.Dropout(m.pos.Apply(s.In("decoder", "pos"), y), m.cfg.Dropout)
	y = m.decoder.Apply(s.In("decoder"), y, memory, tgtMask, srcMask)
	return m.embed.Logits(s.In("embed"), y)
}

// Build adds the whole model for a batch of the given shape to s, with its
// inputs (see Feed), and returns the label-smoothed loss and, in an
// evaluation graph, the log-probabilities [batch, lenT, vocab] (see Output).
func (m *Transformer) Build(s *graph.Scope, sh Shape) (loss, logp *G.Node) {
	if err := checkShape(sh, KindEncoderDecoder, true); err != nil {
		s.Fail(err)
		return nil, nil
	}
	in := newInputs(s, sh, true, true)
	memory := m.encode(s, in.src, in.srcMask)
	return Output(s, m.Decode(s, in.tgtIn, memory, in.tgtMask, in.srcMask), in.tgtOut, m.cfg.LabelSmoothing)
}

// Output turns logits [batch, len, vocab] into the label-smoothed loss
// against targets (an int [batch, len], PadID ignored) and, in an
// evaluation graph, the log-probabilities. A training graph computes the
// loss straight from the logits in one op and has no log-probabilities
// (nil): they would cost two passes over [rows, vocab] that training does
// not read. A scoring graph (graph.Scoring) has neither: it keeps the
// targets' scores, computed from the logits in one op, as TargetScores.
// Every model kind ends with it, in the scope its Build was given.
func Output(s *graph.Scope, logits, targets *G.Node, eps float64) (loss, logp *G.Node) {
	switch {
	case s.Training():
		return s.SmoothedCrossEntropyLogits(logits, targets, eps, PadID), nil
	case s.Scoring():
		s.Keep(TargetScores, s.TargetScores(logits, targets, PadID))
		return nil, nil
	}
	logp = s.LogSoftmax(logits)
	return s.SmoothedCrossEntropy(logp, targets, eps, PadID), logp
}

// Feed sets a program's inputs from a batch.
func (m *Transformer) Feed(p *graph.Program, dt tensor.Dtype, b Batch) error { return Feed(p, dt, b) }
