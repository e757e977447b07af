package model

import (
	"fmt"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/layers"
)

// Inputs of the step program besides the caches and memories.
const (
	inStepIDs  = "step_ids"  // [rows, 1] the previous token of each row
	inSlot     = "slot"      // [1] t, the cache slot the step writes
	inSlotMask = "slot_mask" // [1, 1, 1, maxLen] layers.StepMask(t)
)

// cacheName names cache i's keys ("k") or values ("v"): an input and an
// output of the step program.
func cacheName(i int, kv string) string { return fmt.Sprintf("cache.%d.%s", i, kv) }

// Step is one decoding step under construction, what Generator.Step
// builds on: the scope, and the step program's inputs.
type Step struct {
	Scope *graph.Scope
	// IDs is each row's previous token, int [rows, 1].
	IDs *G.Node
	// At is the position t of the step: the cache slot it writes, and the
	// mask that leaves the slots up to t visible.
	At layers.Slot
	// MaxLen is the number of positions of the caches.
	MaxLen int
	// SrcMask is the sources' padding mask [rows, 1, 1, lenS], each
	// source's row repeated for its beams; nil for a model that reads no
	// sources.
	SrcMask *G.Node
	rows    int
	memory  map[string]tensor.Shape
	caches  []*layers.Cache
}

// newStep adds the inputs of a step program for rows rows and caches of
// maxLen positions, and the mask of sources of srcLen positions (none if
// 0) whose encode program's outputs have the shapes memory.
func newStep(s *graph.Scope, rows, srcLen, maxLen int, memory map[string]tensor.Shape) *Step {
	dt := s.Dtype()
	st := &Step{
		Scope:  s,
		IDs:    s.Input(inStepIDs, tensor.Int, rows, 1),
		At:     layers.Slot{Index: s.Input(inSlot, tensor.Int, 1), Mask: s.Input(inSlotMask, dt, 1, 1, 1, maxLen)},
		MaxLen: maxLen,
		rows:   rows,
		memory: memory,
	}
	if srcLen > 0 {
		st.SrcMask = s.Input(InputSrcMask, dt, rows, 1, 1, srcLen)
	}
	return st
}

// Caches declares n caches of heads heads of dk features, keys and values
// [rows, heads, MaxLen, dk] each, which the step reads (the keys and
// values of the positions before) at the slot At: an attention's Apply
// given one writes the step's keys and values into it (layers.Cache), and
// the step program returns them.
func (st *Step) Caches(n, heads, dk int) []*layers.Cache {
	cs := make([]*layers.Cache, n)
	for i := range cs {
		j := len(st.caches)
		cs[i] = &layers.Cache{
			K:  st.Scope.Input(cacheName(j, "k"), st.Scope.Dtype(), st.rows, heads, st.MaxLen, dk),
			V:  st.Scope.Input(cacheName(j, "v"), st.Scope.Dtype(), st.rows, heads, st.MaxLen, dk),
			At: &st.At,
		}
		st.caches = append(st.caches, cs[i])
	}
	return cs
}

// Memory is the value named name of the model's SourceEncoder.Encode, each
// source's row repeated for its beams: [rows, …].
func (st *Step) Memory(name string) *G.Node {
	sh, ok := st.memory[name]
	if !ok {
		st.Scope.Fail(errors.Errorf("decoding step: the sources' encoding has no value %q", name))
		return nil
	}
	return st.Scope.Input(name, st.Scope.Dtype(), append([]int{st.rows}, sh[1:]...)...)
}

// stepGraph builds, in a scope of params, the graph of g's step program
// for rows rows, sources of srcLen positions (0 for a model that reads
// none) and caches of maxLen positions, reading the encode program's
// outputs of the shapes memory: its outputs are the next-token
// log-probabilities (LogProbs, [rows, 1, vocab]) and the updated caches.
func stepGraph(g Generator, params *graph.Params, rows, srcLen, maxLen int, memory map[string]tensor.Shape) (*graph.Scope, map[string]*G.Node) {
	st := newStep(graph.NewScope(params), rows, srcLen, maxLen, memory)
	logits := g.Step(st)
	outputs := map[string]*G.Node{}
	if st.Scope.Err() == nil {
		outputs[LogProbs] = st.Scope.LogSoftmax(logits)
		for i, c := range st.caches {
			outputs[cacheName(i, "k")], outputs[cacheName(i, "v")] = c.K, c.V
		}
	}
	return st.Scope, outputs
}

// encodeGraph builds, in a scope of params, the graph of enc's encode
// program for n sources of length srcLen: inputs src and src_mask, outputs
// the values of SourceEncoder.Encode, and their shapes.
func encodeGraph(enc SourceEncoder, params *graph.Params, n, srcLen int) (*graph.Scope, map[string]*G.Node, map[string]tensor.Shape) {
	s := graph.NewScope(params)
	src := s.Input(InputSrc, tensor.Int, n, srcLen)
	outputs := enc.Encode(s, src, s.Input(InputSrcMask, s.Dtype(), n, 1, 1, srcLen))
	shapes := map[string]tensor.Shape{}
	for name, v := range outputs {
		if v != nil {
			shapes[name] = v.Shape()
		}
	}
	return s, outputs, shapes
}

// memoryName names layer i's cross-attention keys or values of the encoder's
// output: an output of the encode program and an input of the step program.
func memoryName(i int, kv string) string {
	return fmt.Sprintf("decoder.layers.%d.cross_attn.%s", i, kv)
}
