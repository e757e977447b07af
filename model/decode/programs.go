package decode

import (
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/layers"
	"github.com/transformer-go/transformer/model"
)

// Inputs of the step program besides the values carried and the memories.
const (
	inStepIDs  = "step_ids"  // [rows, 1] the previous token of each row
	inSlot     = "slot"      // [1] t, the cache slot the step writes
	inSlotMask = "slot_mask" // [1, 1, 1, maxLen] layers.StepMask(t)
)

// stepGraph builds, in a scope of params, the graph of g's step program
// for rows rows, sources of srcLen positions (0 for a model that reads
// none) and caches of maxLen positions, reading the encode program's
// outputs of the shapes memory: its outputs are the next-token
// log-probabilities (model.LogProbs, [rows, 1, vocab]) and the next values
// of those it carries, named as their inputs (carried).
func stepGraph(g model.Generator, params *graph.Params, rows, srcLen, maxLen int, memory map[string]tensor.Shape) (s *graph.Scope, outputs map[string]*G.Node, carried []string) {
	s = graph.NewScope(params)
	ids := s.Input(inStepIDs, tensor.Int, rows, 1)
	at := layers.Slot{Index: s.Input(inSlot, tensor.Int, 1), Mask: s.Input(inSlotMask, s.Dtype(), 1, 1, 1, maxLen)}
	var srcMask *G.Node
	if srcLen > 0 {
		srcMask = s.Input(model.InputSrcMask, s.Dtype(), rows, 1, 1, srcLen)
	}
	st := model.NewStep(s, ids, at, maxLen, srcMask, memory)
	logits := g.Step(st)
	outputs, carried = st.Carries()
	if s.Err() == nil {
		outputs[model.LogProbs] = s.LogSoftmax(logits)
	}
	return s, outputs, carried
}

// encodeGraph builds, in a scope of params, the graph of enc's encode
// program for n sources of length srcLen: inputs src and src_mask, outputs
// the values of model.SourceEncoder.Encode, and their shapes.
func encodeGraph(enc model.SourceEncoder, params *graph.Params, n, srcLen int) (*graph.Scope, map[string]*G.Node, map[string]tensor.Shape) {
	s := graph.NewScope(params)
	src := s.Input(model.InputSrc, tensor.Int, n, srcLen)
	outputs := enc.Encode(s, src, s.Input(model.InputSrcMask, s.Dtype(), n, 1, 1, srcLen))
	shapes := map[string]tensor.Shape{}
	for name, v := range outputs {
		if v != nil {
			shapes[name] = v.Shape()
		}
	}
	return s, outputs, shapes
}
