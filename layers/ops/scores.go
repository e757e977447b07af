package ops

import (
	"fmt"
	"slices"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
)

// TargetScores scores integer targets [...] against logits [..., vocab] for
// evaluation, without making the log-probabilities: for every row i with
// target t_i,
//
//	scores[i, 0] = log softmax(logits_i)[t_i] = logits[i, t_i] - log Σ_v exp(logits[i, v])
//	scores[i, 1] = 1 if t_i is the row's most probable token (the first of
//	               equal largest logits), else 0
//
// both 0 for rows whose target is pad. It reads the [rows, vocab] logits
// twice (their largest element, then the sum of exponentials), where
// LogSoftmax and a loss over its output take four passes and write a
// tensor as large. It has no gradient. A target outside [0, vocab) is an
// error when the program runs.
func TargetScores(s *graph.Scope, logits, targets *G.Node, pad int) *G.Node {
	return s.Record(func() (*G.Node, error) { return targetScores(logits, targets, pad) }, logits, targets)
}

func targetScores(logits, targets *G.Node, pad int) (*G.Node, error) {
	if err := checkTargets(logits, targets); err != nil {
		return nil, err
	}
	rows := targets.Shape().TotalSize()
	return graph.Op{
		Name:   fmt.Sprintf("target_scores(pad=%d)", pad),
		Arity:  2,
		Shape:  func([]tensor.Shape) (tensor.Shape, error) { return tensor.Shape{rows, 2}, nil },
		F32:    graph.Kernels[float32]{Forward: targetScoresKernel[float32](pad)},
		F64:    graph.Kernels[float64]{Forward: targetScoresKernel[float64](pad)},
		Device: targetScoresDevice(pad),
	}.Apply(logits, targets)
}

func targetScoresKernel[T graph.Float](pad int) func(graph.Operand[T], []graph.Operand[T]) error {
	return func(scores graph.Operand[T], in []graph.Operand[T]) error {
		return forRows(in[0].Data, in[1].Ints, func(i, t int, row []T) {
			scores.Data[2*i], scores.Data[2*i+1] = targetScore(row, t, pad)
		})
	}
}

// targetScore is the log-probability of target t in the row of logits x,
// and 1 if t is the first index of x's largest element (else 0); 0, 0 when
// t is pad.
func targetScore[T graph.Float](x []T, t, pad int) (logp, best T) {
	if t == pad {
		return 0, 0
	}
	lse, m := logSumExp(x)
	logp = T(float64(x[t]) - lse)
	if x[t] == m && !slices.Contains(x[:t], m) {
		best = 1
	}
	return logp, best
}
