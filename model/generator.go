package model

import (
	"slices"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/layers"
)

// Generator is a Model that generates one position at a time: a
// decode.Decoder runs it against a cache of the earlier positions' keys
// and values. A model whose Layout reads sources is also a SourceEncoder,
// whose output the steps read.
type Generator interface {
	Model
	// Prefix is what the rows of source src are fed before their first
	// output: BOSID for a model that reads its sources with an encoder,
	// BOSID and the prompt src for one that continues prompts.
	Prefix(src []int) []int
	// Step adds one decoding step to st.Scope: each row's token st.IDs at
	// position st.At, against the caches its layers declare, carried from
	// step to step by st (a layers.Carrier), which they extend by that
	// position. It returns the next-token logits [rows, 1, vocab].
	Step(st *Step) *G.Node
}

// SourceEncoder is a Generator that reads sources: Encode maps the
// sources src [n, lenS] (srcMask, PaddingMask of src) to named values,
// each [n, …], that the steps read with Step.Memory, computed once per
// batch of sources.
type SourceEncoder interface {
	Encode(s *graph.Scope, src, srcMask *G.Node) map[string]*G.Node
}

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
	carried []*G.Node           // the inputs the step carries to the next, in order
	next    map[*G.Node]*G.Node // their next values, outputs of the same names
}

// NewStep is the step, in s, of the rows whose previous tokens are ids
// [rows, 1], at the slot at of caches of maxLen positions, reading the
// sources' padding mask srcMask (nil: none) and their encoding's values
// (SourceEncoder.Encode) of the shapes memory.
func NewStep(s *graph.Scope, ids *G.Node, at layers.Slot, maxLen int, srcMask *G.Node, memory map[string]tensor.Shape) *Step {
	return &Step{Scope: s, IDs: ids, At: at, Rows: ids.Shape()[0], MaxLen: maxLen, SrcMask: srcMask, memory: memory, next: map[*G.Node]*G.Node{}}
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

// Carries is what the step carries to the next: the next value of each
// value Carried declared, by the name of its input, and those names in
// order. A value carried but never updated fails the scope.
func (st *Step) Carries() (next map[string]*G.Node, names []string) {
	next = map[string]*G.Node{}
	for _, in := range st.carried {
		if st.next[in] == nil {
			st.Scope.Fail(errors.Errorf("decoding step: %s is carried but never updated", in.Name()))
		}
		next[in.Name()], names = st.next[in], append(names, in.Name())
	}
	return next, names
}
