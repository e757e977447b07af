package model

import (
	"fmt"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/layers"
)

// Incremental decoding runs a step program per batch shape, and for an
// encoder-decoder an encode program too. The encode program maps the
// sources to every decoder layer's cross-attention keys and values; the
// step program decodes one position of every row, reading each layer's
// self-attention cache [rows, heads, maxLen, dk] and returning it updated,
// to be copied back into its input (reordered by the beams' backpointers)
// for the next step.

// Inputs of the step program besides the caches, and for an
// encoder-decoder the memory and src_mask.
const (
	inStepIDs  = "step_ids"  // [rows, 1] the previous token of each row
	inStepPos  = "step_pos"  // [rows, 1] the position t of the new token
	inSlot     = "slot"      // [1] t, the cache slot the step writes
	inSlotMask = "slot_mask" // [1, 1, 1, maxLen] layers.StepMask(t)
)

// cacheName names layer i's self-attention keys ("k") or values ("v"): an input
// and an output of the step program.
func cacheName(i int, kv string) string {
	return fmt.Sprintf("decoder.layers.%d.self_attn.%s_cache", i, kv)
}

// memoryName names layer i's cross-attention keys or values of the encoder's
// output: an output of the encode program and an input of the step program.
func memoryName(i int, kv string) string {
	return fmt.Sprintf("decoder.layers.%d.cross_attn.%s", i, kv)
}

// step is a step program under construction: its scope and the inputs
// every kind's step has.
type step struct {
	s        *graph.Scope
	ids, pos *G.Node
	at       layers.Slot
	caches   []layers.KV
}

// newStep adds the inputs of a step program for rows rows and caches of
// maxLen positions for n layers whose self-attention caches have the
// given heads and dk.
func newStep(params *graph.Params, rows, maxLen, n, heads, dk int) *step {
	s := graph.NewScope(params)
	dt := s.Dtype()
	st := &step{
		s:      s,
		ids:    s.Input(inStepIDs, tensor.Int, rows, 1),
		pos:    s.Input(inStepPos, tensor.Int, rows, 1),
		at:     layers.Slot{Index: s.Input(inSlot, tensor.Int, 1), Mask: s.Input(inSlotMask, dt, 1, 1, 1, maxLen)},
		caches: make([]layers.KV, n),
	}
	for i := range st.caches {
		st.caches[i] = layers.KV{K: s.Input(cacheName(i, "k"), dt, rows, heads, maxLen, dk), V: s.Input(cacheName(i, "v"), dt, rows, heads, maxLen, dk)}
	}
	return st
}

// embed is the embedded previous token of every row at its position t:
// [rows, 1, dModel].
func (st *step) embed(e layers.Embedding, pos layers.Positional, maxLen int) *G.Node {
	return pos.At(st.s.In("decoder", "pos"), e.Apply(st.s.In("embed"), st.ids), st.pos, maxLen)
}

// compile compiles the step program whose last position is y [rows, 1,
// dModel]: its outputs are the next-token log-probabilities (LogProbs,
// [rows, 1, vocab]) and the updated caches.
func (st *step) compile(e layers.Embedding, y *G.Node, caches []layers.KV) (*graph.Program, error) {
	outputs := map[string]*G.Node{}
	if st.s.Err() == nil {
		outputs[LogProbs] = st.s.LogSoftmax(e.Logits(st.s.In("embed"), y))
		for i, kv := range caches {
			outputs[cacheName(i, "k")], outputs[cacheName(i, "v")] = kv.K, kv.V
		}
	}
	return graph.Compile(st.s, nil, outputs)
}

// compileEncode builds the encode program for n sources of length srcLen:
// inputs src and src_mask, outputs each layer's memory keys and values
// [n, heads, srcLen, dk].
func (m *Transformer) compileEncode(params *graph.Params, n, srcLen int) (*graph.Program, error) {
	s := graph.NewScope(params)
	src := s.Input(InputSrc, tensor.Int, n, srcLen)
	mask := s.Input(InputSrcMask, s.Dtype(), n, 1, 1, srcLen)
	memory := m.decoder.Memory(s.In("decoder"), m.Encode(s, src, mask))
	outputs := map[string]*G.Node{}
	for i, kv := range memory {
		outputs[memoryName(i, "k")], outputs[memoryName(i, "v")] = kv.K, kv.V
	}
	p, err := graph.Compile(s, nil, outputs)
	return p, errors.Wrapf(err, "encode program for %d sources of length %d", n, srcLen)
}

// compileStep builds the encoder-decoder's step program for rows rows,
// sources of length srcLen and caches of maxLen positions.
func (m *Transformer) compileStep(params *graph.Params, rows, srcLen, maxLen int) (*graph.Program, error) {
	heads, dk, err := m.decoder.Layer.CacheDims()
	if err != nil {
		return nil, err
	}
	mh, mdk, err := m.decoder.Layer.MemoryDims()
	if err != nil {
		return nil, err
	}
	st := newStep(params, rows, maxLen, m.decoder.N, heads, dk)
	s, dt := st.s, st.s.Dtype()
	memMask := s.Input(InputSrcMask, dt, rows, 1, 1, srcLen)
	memory := make([]layers.KV, m.decoder.N)
	for i := range memory {
		memory[i] = layers.KV{K: s.Input(memoryName(i, "k"), dt, rows, mh, srcLen, mdk), V: s.Input(memoryName(i, "v"), dt, rows, mh, srcLen, mdk)}
	}
	y, caches := m.decoder.Step(s.In("decoder"), st.embed(m.embed, m.pos, maxLen), st.caches, st.at, memory, memMask)
	p, err := st.compile(m.embed, y, caches)
	return p, errors.Wrapf(err, "step program for %d rows, sources of length %d and %d positions", rows, srcLen, maxLen)
}

// compileStep builds the decoder-only model's step program for rows rows
// and caches of maxLen positions (srcLen is unused: there are no sources).
func (m *DecoderOnly) compileStep(params *graph.Params, rows, _, maxLen int) (*graph.Program, error) {
	heads, dk, err := m.stack.Layer.CacheDims()
	if err != nil {
		return nil, err
	}
	st := newStep(params, rows, maxLen, m.stack.N, heads, dk)
	y, caches := m.stack.Step(st.s.In("decoder"), st.embed(m.embed, m.pos, maxLen), st.caches, st.at)
	p, err := st.compile(m.embed, y, caches)
	return p, errors.Wrapf(err, "step program for %d rows and %d positions", rows, maxLen)
}
