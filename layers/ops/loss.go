package ops

import (
	"fmt"
	"math"
	"slices"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
)

// SmoothedCrossEntropy is the label-smoothed cross-entropy of log-probabilities
// logp [..., vocab] against integer targets [...] (Szegedy et al., 2016, as
// used by the paper with ε = 0.1), averaged over the targets that are not pad:
//
//	q = (1-ε)·onehot(t) + ε/vocab,   loss = (1/N) Σ_{i: t_i ≠ pad} -Σ_v q_v · logp[i, v]
//
// With ε = 0 it is the mean negative log-likelihood. A batch of only padding has
// loss 0. A target outside [0, vocab) is an error when the program runs.
func SmoothedCrossEntropy(s *graph.Scope, logp, targets *G.Node, eps float64, pad int) *G.Node {
	return s.Record(func() (*G.Node, error) { return smoothedCrossEntropy(logp, targets, eps, pad, false) }, logp, targets)
}

// SmoothedCrossEntropyLogits is SmoothedCrossEntropy(LogSoftmax(logits), …)
// in one pass over the logits, for training: with lse the row's log-sum-exp,
//
//	loss_i = lse_i - (1-ε)·logits[i, t_i] - ε/vocab · Σ_v logits[i, v]
//	∂loss/∂logits[i, v] = (softmax(logits_i)_v - q_v) / N
//
// It reads the [rows, vocab] logits twice instead of the four passes of the
// two ops, and makes no log-probability tensor.
func SmoothedCrossEntropyLogits(s *graph.Scope, logits, targets *G.Node, eps float64, pad int) *G.Node {
	return s.Record(func() (*G.Node, error) { return smoothedCrossEntropy(logits, targets, eps, pad, true) }, logits, targets)
}

// smoothedCrossEntropy is the mean over the non-pad rows (meanLoss) of the
// rows' losses (rowLosses); logits says whether x holds logits or
// log-probabilities.
func smoothedCrossEntropy(x, targets *G.Node, eps float64, pad int, logits bool) (*G.Node, error) {
	if err := checkTargets(x, targets); err != nil {
		return nil, err
	}
	if eps < 0 || eps >= 1 {
		return nil, errors.Errorf("cross-entropy: label smoothing %g not in [0, 1)", eps)
	}
	stats, err := rowLosses(x, targets, eps, pad, logits)
	if err != nil {
		return nil, err
	}
	return meanLoss(stats, targets, pad)
}

// rowLosses gives, for every row i of x [..., vocab], stats [rows, 2]: the
// normalizer z_i subtracted from the row to make log-probabilities (its
// log-sum-exp for logits, 0 for log-probabilities) and the row's loss
//
//	loss_i = z_i - (1-ε)·x[i, t_i] - ε/vocab · Σ_v x[i, v]
//
// both 0 for pad rows. Keeping z as an output hands the log-sum-exps to the
// backward pass along a graph edge. Its gradient, with s_i the row's softmax
// (the elements of q_v below as in SmoothedCrossEntropy):
//
//	dx[i, v] = dstats[i, 1]·(s_iv·[logits] - q_v) + dstats[i, 0]·s_iv·[logits]
func rowLosses(x, targets *G.Node, eps float64, pad int, logits bool) (*G.Node, error) {
	rows := targets.Shape().TotalSize()
	save := []int{1} // the log-probabilities' gradient needs only the targets
	if logits {
		save = []int{0, 1}
	}
	return graph.Op{
		Name:       fmt.Sprintf("smoothed_cross_entropy_rows(eps=%g,pad=%d,logits=%t)", eps, pad, logits),
		Arity:      2,
		Shape:      func([]tensor.Shape) (tensor.Shape, error) { return tensor.Shape{rows, 2}, nil },
		F32:        rowLossKernels[float32](eps, pad, logits),
		F64:        rowLossKernels[float64](eps, pad, logits),
		Device:     rowLossDevice(eps, pad, logits, x.Shape()[x.Dims()-1]),
		Diff:       []bool{true, false},
		Save:       save,
		SaveOutput: logits,
	}.Apply(x, targets)
}

// rowLossKernels write each row's normalizer and loss (smoothedRows) and
// their gradient; the gradient reads x and stats only for logits.
func rowLossKernels[T graph.Float](eps float64, pad int, logits bool) graph.Kernels[T] {
	return graph.Kernels[T]{
		Forward: func(stats graph.Operand[T], in []graph.Operand[T]) error {
			return smoothedRows(stats.Data, in[0].Data, in[1].Ints, eps, pad, logits)
		},
		Backward: func(_ int, dx graph.Operand[T], in []graph.Operand[T], stats, dstats graph.Operand[T]) error {
			q := T(eps / float64(len(dx.Data)/len(in[1].Ints)))
			return forRows(dx.Data, in[1].Ints, func(i, t int, dr []T) {
				dz, dl := dstats.Data[2*i], dstats.Data[2*i+1]
				switch {
				case t == pad:
					clear(dr)
					return
				case logits:
					// dr = (dl + dz)·softmax(row) - dl·q, the softmax being e^(row - lse)
					// divided by its sum: lse as stored in T is rounded at the logits'
					// magnitude (by up to 1e-3 in float32 near 1e4), and the sum
					// cancels that rounding.
					sum := graph.ExpShift(dr, in[0].Data[i*len(dr):(i+1)*len(dr)], stats.Data[2*i])
					s, c := (dl+dz)/T(sum), dl*q
					for v, p := range dr {
						dr[v] = s*p - c
					}
				default:
					for v := range dr {
						dr[v] = -dl * q
					}
				}
				dr[t] -= dl * T(1-eps)
			})
		},
	}
}

// smoothedRows writes each row's normalizer and loss (see rowLosses) into stats.
func smoothedRows[T graph.Float](stats, x []T, targets []int, eps float64, pad int, logits bool) error {
	return forRows(x, targets, func(i, t int, row []T) {
		stats[2*i], stats[2*i+1] = 0, 0
		if t == pad {
			return
		}
		var z float64
		if logits {
			z, _ = logSumExp(row)
		}
		stats[2*i] = T(z)
		stats[2*i+1] = T(z - (1-eps)*float64(row[t]) - eps/float64(len(row))*graph.RowSum(row))
	})
}

// meanLoss is the mean of the rows' losses (stats[:, 1]) over the N rows whose
// target is not pad, 0 if there are none; its gradient is dl/N on those rows.
func meanLoss(stats, targets *G.Node, pad int) (*G.Node, error) {
	return graph.Op{
		Name:   fmt.Sprintf("mean_loss(pad=%d)", pad),
		Arity:  2,
		Shape:  func([]tensor.Shape) (tensor.Shape, error) { return tensor.ScalarShape(), nil },
		F32:    meanLossKernels[float32](pad),
		F64:    meanLossKernels[float64](pad),
		Device: meanLossDevice(pad),
		Diff:   []bool{true, false},
		Save:   []int{1},
	}.Apply(stats, targets)
}

func meanLossKernels[T graph.Float](pad int) graph.Kernels[T] {
	return graph.Kernels[T]{
		Forward: func(l graph.Operand[T], in []graph.Operand[T]) error {
			var sum float64
			for i := 1; i < len(in[0].Data); i += 2 {
				sum += float64(in[0].Data[i])
			}
			l.Data[0] = T(sum / float64(max(countTargets(in[1].Ints, pad), 1)))
			return nil
		},
		Backward: func(_ int, d graph.Operand[T], in []graph.Operand[T], _, dl graph.Operand[T]) error {
			g := T(float64(dl.Data[0]) / float64(max(countTargets(in[1].Ints, pad), 1)))
			for i, t := range in[1].Ints {
				d.Data[2*i], d.Data[2*i+1] = 0, g
				if t == pad {
					d.Data[2*i+1] = 0
				}
			}
			return nil
		},
	}
}

// countTargets is the number of targets that are not pad.
func countTargets(targets []int, pad int) int {
	n := 0
	for _, t := range targets {
		if t != pad {
			n++
		}
	}
	return n
}

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
		Device: targetScoresDevice(pad, logits.Shape()[logits.Dims()-1]),
		ONNX:   targetScoresONNX(pad),
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

// checkTargets checks, when the graph is built, that targets are ints, one
// per row of logp [..., vocab].
func checkTargets(logp, targets *G.Node) error {
	ls, ts := logp.Shape(), targets.Shape()
	if targets.Dtype() != tensor.Int {
		return errors.Errorf("cross-entropy: targets are %v, want int", targets.Dtype())
	}
	if logp.Dims() < 2 || ls[:len(ls)-1].TotalSize() != ts.TotalSize() {
		return errors.Errorf("cross-entropy: log-probabilities %v do not match targets %v", ls, ts)
	}
	return nil
}

// checkTargetIDs checks, when the program runs, that every target is in
// [0, vocab).
func checkTargetIDs(targets []int, vocab int) error {
	for i, t := range targets {
		if t < 0 || t >= vocab {
			return errors.Errorf("target %d at row %d outside the vocabulary [0, %d)", t, i, vocab)
		}
	}
	return nil
}

// forRows checks that every target is in [0, vocab), vocab the length of
// x's rows, and calls f with each row of x, its index and its target,
// several goroutines each taking some rows.
func forRows[T graph.Float](x []T, targets []int, f func(i, t int, row []T)) error {
	vocab := len(x) / len(targets)
	if err := checkTargetIDs(targets, vocab); err != nil {
		return err
	}
	graph.ParallelFor(len(targets), vocab, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			f(i, targets[i], x[i*vocab:(i+1)*vocab])
		}
	})
	return nil
}

// logSumExp is log Σ exp(x_j), computed from the row's maximum, which it
// returns too (NaN if any element is).
func logSumExp[T graph.Float](x []T) (lse float64, top T) {
	top = graph.RowMax(x)
	return float64(top) + math.Log(graph.ExpShift(nil, x, top)), top
}
