package model

import (
	"math/rand/v2"

	G "gorgonia.org/gorgonia"

	"github.com/transformer-go/transformer/graph"
)

// LogProbs names the log-probabilities [batch, lenT, vocab] among a program's outputs.
const LogProbs = "logp"

// CompileTrain builds m for training batches of shape sh and compiles it: dropout
// draws from rng, and each run computes the label-smoothed loss and its gradient
// with respect to every parameter.
func CompileTrain(m Model, params *graph.Params, sh Shape, rng *rand.Rand) (*graph.Program, error) {
	s := graph.NewScope(params, graph.Training(rng))
	loss, _ := m.Build(s, sh)
	return graph.Compile(s, loss, nil)
}

// CompileEval builds m for evaluation (no dropout, no gradients) on batches of
// shape sh. Its outputs are the log-probabilities (LogProbs) and, by their full
// names, the attention weights of every layer
// ("decoder.layers.0.cross_attn.weights", [batch, heads, lenQ, lenK]).
func CompileEval(m Model, params *graph.Params, sh Shape) (*graph.Program, error) {
	s := graph.NewScope(params)
	_, logp := m.Build(s, sh)
	outputs := map[string]*G.Node{LogProbs: logp}
	for name, n := range s.Kept() {
		outputs[name] = n
	}
	return graph.Compile(s, nil, outputs)
}
