package model

import (
	"maps"
	"math/rand/v2"

	G "gorgonia.org/gorgonia"

	"github.com/transformer-go/transformer/graph"
)

// LogProbs names the log-probabilities [batch, lenT, vocab] among a program's outputs.
const LogProbs = "logp"

// TargetScores names the scores [batch·lenT, 2] of a scoring program's
// targets (CompileScore): each target's log-probability, and 1 if it is the
// most probable token, else 0 (ops.TargetScores).
const TargetScores = "scores"

// CompileTrain builds m for training batches of shape sh and compiles it to
// run on rt (nil: a CPU runtime of its own, graph.CPU): dropout draws from
// rng, and each run computes the label-smoothed loss and its gradient with
// respect to every parameter.
func CompileTrain(rt *graph.Runtime, m Model, params *graph.Params, sh Shape, rng *rand.Rand) (*graph.Program, error) {
	s := graph.NewScope(params, graph.Training(rng))
	loss, _ := m.Build(s, sh)
	return graph.Compile(rt, s, loss, nil)
}

// CompileEval builds m for evaluation (EvalGraph: no dropout, no
// gradients) on batches of shape sh, to run on rt. Its outputs are the
// loss (Program.Loss), the log-probabilities (LogProbs) and, by their full
// names, the attention weights of every layer
// ("decoder.layers.0.cross_attn.weights", [batch, heads, lenQ, lenK]).
func CompileEval(rt *graph.Runtime, m Model, params *graph.Params, sh Shape) (*graph.Program, error) {
	s, outputs := EvalGraph(m, params, sh)
	return graph.Compile(rt, s, nil, outputs)
}

// EvalGraph builds m for evaluation on batches of shape sh in a scope of
// params and returns the scope and the outputs CompileEval compiles:
// the loss (graph.LossOutput), LogProbs and the attention weights kept by
// their names.
func EvalGraph(m Model, params *graph.Params, sh Shape) (*graph.Scope, map[string]*G.Node) {
	s := graph.NewScope(params)
	loss, logp := m.Build(s, sh)
	outputs := map[string]*G.Node{LogProbs: logp, graph.LossOutput: loss}
	maps.Copy(outputs, s.Kept())
	return s, outputs
}

// CompileScore builds m for scoring batches of shape sh (ScoreGraph), to
// run on rt, as evaluation and ScorePairs do. ScoreRun reads its outputs.
func CompileScore(rt *graph.Runtime, m Model, params *graph.Params, sh Shape) (*graph.Program, error) {
	s, outputs := ScoreGraph(m, params, sh)
	return graph.Compile(rt, s, nil, outputs)
}

// ScoreGraph builds m for scoring batches of shape sh (graph.Scoring) in a
// scope of params and returns the scope and its outputs: a model that
// ends with Output outputs TargetScores, from the logits, without
// [batch, lenT, vocab] log-probabilities; one that does not outputs
// LogProbs. CompileScore compiles it; package graph/onnx exports it.
func ScoreGraph(m Model, params *graph.Params, sh Shape) (*graph.Scope, map[string]*G.Node) {
	s := graph.NewScope(params, graph.Scoring())
	_, logp := m.Build(s, sh)
	if scores := s.Kept()[TargetScores]; scores != nil {
		return s, map[string]*G.Node{TargetScores: scores}
	}
	return s, map[string]*G.Node{LogProbs: logp}
}
