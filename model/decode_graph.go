package model

import (
	"fmt"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/layers"
)

// Incremental decoding runs two programs per batch shape. The encode program
// maps the sources to every decoder layer's cross-attention keys and values;
// the step program decodes one position of every row, reading each layer's
// self-attention cache [rows, heads, maxLen, dk] and returning it updated, to
// be copied back into its input (reordered by the beams' backpointers) for
// the next step.

// Inputs of the step program besides the caches, the memory and src_mask.
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

// compileEncode builds the encode program for n sources of length srcLen:
// inputs src and src_mask, outputs each layer's memory keys and values
// [n, heads, srcLen, dk].
func (m *Transformer) compileEncode(params *graph.Params, n, srcLen int) (*graph.Program, error) {
	s := graph.NewScope(params)
	src := s.Input(inSrc, tensor.Int, n, srcLen)
	mask := s.Input(inSrcMask, s.Dtype(), n, 1, 1, srcLen)
	memory := m.decoder.Memory(s.In("decoder"), m.Encode(s, src, mask))
	outputs := map[string]*G.Node{}
	for i, kv := range memory {
		outputs[memoryName(i, "k")], outputs[memoryName(i, "v")] = kv.K, kv.V
	}
	p, err := graph.Compile(s, nil, outputs)
	return p, errors.Wrapf(err, "encode program for %d sources of length %d", n, srcLen)
}

// compileStep builds the step program for rows rows, sources of length srcLen
// and caches of maxLen positions. Its outputs are the next-token
// log-probabilities (LogProbs, [rows, 1, vocab]) and the updated caches.
func (m *Transformer) compileStep(params *graph.Params, rows, srcLen, maxLen int) (*graph.Program, error) {
	s := graph.NewScope(params)
	dt, heads, dk := s.Dtype(), m.cfg.Heads, m.cfg.DModel/m.cfg.Heads
	ids := s.Input(inStepIDs, tensor.Int, rows, 1)
	pos := s.Input(inStepPos, tensor.Int, rows, 1)
	at := layers.Slot{Index: s.Input(inSlot, tensor.Int, 1), Mask: s.Input(inSlotMask, dt, 1, 1, 1, maxLen)}
	memMask := s.Input(inSrcMask, dt, rows, 1, 1, srcLen)
	caches, memory := make([]layers.KV, m.cfg.DecoderLayers), make([]layers.KV, m.cfg.DecoderLayers)
	for i := range caches {
		caches[i] = layers.KV{K: s.Input(cacheName(i, "k"), dt, rows, heads, maxLen, dk), V: s.Input(cacheName(i, "v"), dt, rows, heads, maxLen, dk)}
		memory[i] = layers.KV{K: s.Input(memoryName(i, "k"), dt, rows, heads, srcLen, dk), V: s.Input(memoryName(i, "v"), dt, rows, heads, srcLen, dk)}
	}
	// y: [rows, 1, dModel], the embedded previous token at position t
	y := m.decPos.At(s.In("decoder", "pos"), m.embed.Apply(s.In("embed"), ids), pos, maxLen)
	y, caches = m.decoder.Step(s.In("decoder"), y, caches, at, memory, memMask)
	outputs := map[string]*G.Node{LogProbs: s.LogSoftmax(m.embed.Logits(s.In("embed"), y))}
	for i, kv := range caches {
		outputs[cacheName(i, "k")], outputs[cacheName(i, "v")] = kv.K, kv.V
	}
	p, err := graph.Compile(s, nil, outputs)
	return p, errors.Wrapf(err, "step program for %d rows, sources of length %d and %d positions", rows, srcLen, maxLen)
}
