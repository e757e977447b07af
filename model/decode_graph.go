package model

import (
	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
	"slices"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/layers"
)

// Inputs of the step program besides the values carried and the memories.
const (
	inStepIDs  = "step_ids"  // [rows, 1] the previous token of each row
	inSlot     = "slot"      // [1] t, the cache slot the step writes
	inSlotMask = "slot_mask" // [1, 1, 1, maxLen] layers.StepMask(t)
)

// Step is one decoding step under construction, what Generator.Step
// builds on: the scope, and the step program's inputs. It is the
// layers.Carrier of the caches its layers declare (layers.Stack.Caches):
// each is an input of the step program and its update an output, which
// the decoder sets as the input of the step after.
type Step struct {
	Scope *graph.Scope
	// IDs is each row's previous token, int [rows, 1].
	IDs *G.Node
	// At is the position t of the step: the cache slot it writes, and the
	// mask that leaves the slots up to t visible.
	At layers.Slot
	// Rows is the number of rows, and MaxLen the number of positions of
	// the caches.
	Rows, MaxLen int
	// SrcMask is the sources' padding mask [rows, 1, 1, lenS], each
	// source's row repeated for its beams; nil for a model that reads no
	// sources.
	SrcMask *G.Node
	memory  map[string]tensor.Shape
	// carried are the inputs the step carries to the next, in order, and
	// next their next values, outputs of the same names.
	carried []*G.Node
	next    map[*G.Node]*G.Node
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
		Rows:   rows,
		MaxLen: maxLen,
		memory: memory,
		next:   map[*G.Node]*G.Node{},
	}
	if srcLen > 0 {
		st.SrcMask = s.Input(InputSrcMask, dt, rows, 1, 1, srcLen)
	}
	return st
}

// Carried declares the step program's input of name in s (its full
// name), of the given shape: the value as the step before left it.
func (st *Step) Carried(s *graph.Scope, name string, shape ...int) *G.Node {
	in := s.Input(s.Name(name), s.Dtype(), shape...)
	st.carried = append(st.carried, in)
	return in
}

// Update gives the value of carried, an input Carried returned, at the
// next step: an output of the step program.
func (st *Step) Update(in, next *G.Node) {
	if !slices.Contains(st.carried, in) {
		st.Scope.Fail(errors.New("decoding step: an update of a value that the step does not carry"))
	}
	st.next[in] = next
}

// Memory is the value named name of the model's SourceEncoder.Encode, each
// source's row repeated for its beams: [rows, …].
func (st *Step) Memory(name string) *G.Node {
	sh, ok := st.memory[name]
	if !ok {
		st.Scope.Fail(errors.Errorf("decoding step: the sources' encoding has no value %q", name))
		return nil
	}
	return st.Scope.Input(name, st.Scope.Dtype(), append([]int{st.Rows}, sh[1:]...)...)
}

// stepGraph builds, in a scope of params, the graph of g's step program
// for rows rows, sources of srcLen positions (0 for a model that reads
// none) and caches of maxLen positions, reading the encode program's
// outputs of the shapes memory: its outputs are the next-token
// log-probabilities (LogProbs, [rows, 1, vocab]) and the next values of
// those it carries, named as their inputs (carried).
func stepGraph(g Generator, params *graph.Params, rows, srcLen, maxLen int, memory map[string]tensor.Shape) (s *graph.Scope, outputs map[string]*G.Node, carried []string) {
	st := newStep(graph.NewScope(params), rows, srcLen, maxLen, memory)
	logits := g.Step(st)
	outputs = map[string]*G.Node{}
	for _, in := range st.carried {
		if st.next[in] == nil {
			st.Scope.Fail(errors.Errorf("decoding step: %s is carried but never updated", in.Name()))
		}
		outputs[in.Name()], carried = st.next[in], append(carried, in.Name())
	}
	if st.Scope.Err() == nil {
		outputs[LogProbs] = st.Scope.LogSoftmax(logits)
	}
	return st.Scope, outputs, carried
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
