package model

import (
	"fmt"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/layers"
	"github.com/transformer-go/transformer/layers/ops"
)

// The reserved token ids every model and batch use (as package data does).
const (
	PadID = 0 // padding, masked everywhere
	BOSID = 1 // starts every decoder input
	EOSID = 2 // ends every source and target
)

// Transformer is the network of the paper (figure 1), whose parts are
// optional: a shared embedding, positional encodings, an encoder stack
// ("encoder"), a decoder stack ("decoder") whose layers attend to the
// encoder's output when there is one, and the pre-softmax projection tied
// to the embedding. Config.Kind says which stacks it has (see the package
// doc's table of kinds).
type Transformer struct {
	cfg     Config
	embed   layers.Embedding
	pos     layers.Positional
	encoder *layers.Stack
	decoder *layers.Stack
}

// New returns the encoder-decoder model described by cfg (whatever its
// Kind), with the built-in variants; FromConfig builds any kind, with
// variants of one's own.
func New(cfg Config) (*Transformer, error) {
	cfg.Kind = KindEncoderDecoder
	return newTransformer(cfg, nil, true)
}

// NewDecoderOnly returns a decoder-only model of cfg.DecoderLayers layers
// (whatever cfg.Kind), with the built-in variants.
func NewDecoderOnly(cfg Config) (*Transformer, error) {
	cfg.Kind = KindDecoderOnly
	return newTransformer(cfg, nil, true)
}

// NewEncoderOnly returns an encoder-only model of cfg.EncoderLayers layers
// (whatever cfg.Kind), with the built-in variants.
func NewEncoderOnly(cfg Config) (*Transformer, error) {
	cfg.Kind = KindEncoderOnly
	return newTransformer(cfg, nil, true)
}

// Config is the model's configuration, with every option its variants
// declare (those its config left out at their defaults).
func (m *Transformer) Config() Config { return m.cfg }

// Layout says the model reads sources if it has an encoder, and aligns
// targets with them if it has no decoder.
func (m *Transformer) Layout() Layout {
	return Layout{Sources: m.encoder != nil, Aligned: m.decoder == nil}
}

// encode maps source ids [batch, lenS] to the encoder's output
// [batch, lenS, dModel]; srcMask is PaddingMask of the sources.
func (m *Transformer) encode(s *graph.Scope, src, srcMask *G.Node) *G.Node {
	x := s.Differentiable(SrcEmbeddings, m.embed.Apply(s.In("embed"), src))
	x = s.Dropout(m.pos.Apply(s.In("encoder", "pos"), x, nil), m.cfg.Dropout)
	return m.encoder.Apply(s.In("encoder"), x, srcMask, nil, nil, nil)
}

// decode maps target ids [batch, lenT] (starting with BOS) and the
// encoder's output memory (nil without an encoder) to next-token scores
// (logits) [batch, lenT, vocab]:
//
//	Decoder(y, memory) · Eᵀ
//
// whose log softmax is the next-token log-probabilities. With a slot and
// caches, ids [rows, 1] are one position of incremental decoding.
func (m *Transformer) decode(s *graph.Scope, ids, mask, memory, memMask *G.Node, at *layers.Slot, caches []layers.LayerCache) *G.Node {
	y := m.embed.Apply(s.In("embed"), ids)
	y = s.Dropout(m.pos.Apply(s.In("decoder", "pos"), y, at), m.cfg.Dropout)
	y = m.decoder.Apply(s.In("decoder"), y, mask, memory, memMask, caches)
	return m.embed.Logits(s.In("embed"), y)
}

// Build adds the whole model for a batch of the given shape to s, with its
// inputs (see Feed), and returns the label-smoothed loss and, in an
// evaluation graph, the log-probabilities [batch, lenT, vocab] (see Output).
func (m *Transformer) Build(s *graph.Scope, sh Shape) (loss, logp *G.Node) {
	l := m.Layout()
	if err := checkShape(sh, m.cfg.Kind, l); err != nil {
		s.Fail(err)
		return nil, nil
	}
	in := newInputs(s, sh, l.Sources, !l.Aligned)
	var memory *G.Node
	if m.encoder != nil {
		memory = m.encode(s, in.src, in.srcMask)
	}
	if m.decoder == nil {
		return Output(s, m.embed.Logits(s.In("embed"), memory), in.tgtOut, m.cfg.LabelSmoothing)
	}
	return Output(s, m.decode(s, in.tgtIn, in.tgtMask, memory, in.srcMask, nil, nil), in.tgtOut, m.cfg.LabelSmoothing)
}

// Output turns logits [batch, len, vocab] into the label-smoothed loss
// against targets (an int [batch, len], PadID ignored) and, in an
// evaluation graph, the log-probabilities. A training graph computes the
// loss from the logits in one op, without the log-probabilities (nil), two
// passes over [rows, vocab] it would not read. A scoring graph has neither:
// it keeps the targets' scores, from the logits in one op, as TargetScores.
// Every model kind ends with it, in the scope its Build was given.
func Output(s *graph.Scope, logits, targets *G.Node, eps float64) (loss, logp *G.Node) {
	switch {
	case s.Training():
		return ops.SmoothedCrossEntropyLogits(s, logits, targets, eps, PadID), nil
	case s.Scoring():
		s.Keep(TargetScores, ops.TargetScores(s, logits, targets, PadID))
		return nil, nil
	}
	logp = s.LogSoftmax(logits)
	return ops.SmoothedCrossEntropy(s, logp, targets, eps, PadID), logp
}

// Feed sets a program's inputs from a batch.
func (m *Transformer) Feed(p *graph.Program, b Batch) error { return Feed(p, b) }

// Prefix is what a row is fed before it generates: the start token, and
// for a model without an encoder the prompt src.
func (m *Transformer) Prefix(src []int) []int {
	if m.encoder != nil {
		return []int{BOSID}
	}
	return append([]int{BOSID}, src...)
}

// Encode maps the sources to every decoder layer's cross-attention keys
// and values [n, lenS, kvHeads·dk] (memoryName), which the steps read.
func (m *Transformer) Encode(s *graph.Scope, src, srcMask *G.Node) map[string]*G.Node {
	outputs := map[string]*G.Node{}
	if m.decoder == nil {
		s.Fail(errors.New("a model without a decoder does not generate"))
		return outputs
	}
	for i, c := range m.decoder.Memory(s.In("decoder"), m.encode(s, src, srcMask)) {
		outputs[memoryName(i, "k")], outputs[memoryName(i, "v")] = c.K, c.V
	}
	return outputs
}

// memoryName names layer i's cross-attention keys or values of the encoder's
// output: an output of Encode, which Step reads.
func memoryName(i int, kv string) string {
	return fmt.Sprintf("decoder.layers.%d.cross_attn.%s", i, kv)
}

// Step decodes one position of every row against the self-attention
// caches its decoder layers declare and, with an encoder, the sources'
// cross-attention keys and values.
func (m *Transformer) Step(st *Step) *G.Node {
	if m.decoder == nil {
		st.Scope.Fail(errors.New("a model without a decoder does not generate"))
		return nil
	}
	var memory []*layers.Cache
	if m.encoder != nil {
		memory = make([]*layers.Cache, m.decoder.N)
		for i := range memory {
			memory[i] = &layers.Cache{K: st.Memory(memoryName(i, "k")), V: st.Memory(memoryName(i, "v"))}
		}
	}
	caches := m.decoder.Caches(st.Scope.In("decoder"), st, &st.At, st.Rows, memory)
	return m.decode(st.Scope, st.IDs, nil, nil, st.SrcMask, &st.At, caches)
}
