package graph

import (
	"fmt"
	"math"
	"slices"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// SmoothedCrossEntropy is the label-smoothed cross-entropy of log-probabilities
// logp [..., vocab] against integer targets [...] (Szegedy et al., 2016, as
// used by the paper with ε = 0.1), averaged over the targets that are not pad:
//
//	q = (1-ε)·onehot(t) + ε/vocab,   loss = (1/N) Σ_{i: t_i ≠ pad} -Σ_v q_v · logp[i, v]
//
// With ε = 0 it is the mean negative log-likelihood. A batch of only padding has
// loss 0. A target outside [0, vocab) is an error when the program runs.
func SmoothedCrossEntropy(logp, targets *G.Node, eps float64, pad int) (*G.Node, error) {
	if err := checkTargets(logp, targets); err != nil {
		return nil, err
	}
	if eps < 0 || eps >= 1 {
		return nil, errors.Errorf("cross-entropy: label smoothing %g not in [0, 1)", eps)
	}
	op := &kernelOp{
		name:    fmt.Sprintf("smoothed_cross_entropy(eps=%g,pad=%d)", eps, pad),
		arity:   2,
		sig:     signature(tensorType(0), tensorType(logp.Dims()), intTensorType(targets.Dims())),
		shape:   func([]tensor.Shape) (tensor.Shape, error) { return tensor.ScalarShape(), nil },
		diffWRT: []bool{true, false},
	}
	op.scalar = func(in []*tensor.Dense) (float64, error) {
		switch lp := in[0].Data().(type) {
		case []float32:
			return crossEntropy(lp, in[1].Data().([]int), eps, pad)
		default:
			return crossEntropy(lp.([]float64), in[1].Data().([]int), eps, pad)
		}
	}
	op.diff = func(in G.Nodes, _, dl *G.Node) (G.Nodes, error) {
		d, err := crossEntropyGrad(in[0], in[1], dl, eps, pad)
		return G.Nodes{d, nil}, err
	}
	return apply(op, logp, targets)
}

// crossEntropyGrad is the gradient of SmoothedCrossEntropy with respect to logp:
// d[i, v] = -dl · q_v / N for non-pad rows, 0 for pad rows.
func crossEntropyGrad(logp, targets, dl *G.Node, eps float64, pad int) (*G.Node, error) {
	op := &kernelOp{
		name:  fmt.Sprintf("smoothed_cross_entropy_grad(eps=%g,pad=%d)", eps, pad),
		arity: 3,
		sig:   signature(tensorType(logp.Dims()), tensorType(logp.Dims()), intTensorType(targets.Dims()), tensorType(0)),
		shape: sameShape,
	}
	op.forward = func(d *tensor.Dense, in []*tensor.Dense) error {
		dl := scalarOf(in[2])
		switch dd := d.Data().(type) {
		case []float32:
			crossEntropyBackward(dd, in[1].Data().([]int), dl, eps, pad)
		case []float64:
			crossEntropyBackward(dd, in[1].Data().([]int), dl, eps, pad)
		}
		return nil
	}
	return apply(op, logp, targets, dl)
}

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

func crossEntropy[T float](logp []T, targets []int, eps float64, pad int) (float64, error) {
	return smoothedLoss(logp, targets, eps, pad, func(int, []T) float64 { return 0 })
}

// smoothedLoss is the mean, over the rows whose target is not pad, of the
// label-smoothed cross-entropy -(1-ε)·logp_t - ε/V·Σ_j logp_j, where a row's
// log-probabilities are its elements less norm(i, row): 0 for
// log-probabilities, the log-sum-exp for logits.
func smoothedLoss[T float](x []T, targets []int, eps float64, pad int, norm func(i int, row []T) float64) (float64, error) {
	vocab := len(x) / len(targets)
	if err := checkIDs(targets, vocab); err != nil {
		return 0, err
	}
	var loss float64
	for i, t := range targets {
		if t == pad {
			continue
		}
		row := x[i*vocab : (i+1)*vocab]
		var sum float64
		for _, v := range row {
			sum += float64(v)
		}
		loss += norm(i, row) - (1-eps)*float64(row[t]) - eps/float64(vocab)*sum
	}
	if n := countTargets(targets, pad); n > 0 {
		return loss / float64(n), nil
	}
	return 0, nil
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

func crossEntropyBackward[T float](d []T, targets []int, dl, eps float64, pad int) {
	vocab := len(d) / len(targets)
	scale := -dl / float64(max(countTargets(targets, pad), 1))
	for i, t := range targets {
		row := d[i*vocab : (i+1)*vocab]
		if t == pad {
			clear(row)
			continue
		}
		for v := range row {
			row[v] = T(scale * eps / float64(vocab))
		}
		row[t] += T(scale * (1 - eps))
	}
}

// SmoothedCrossEntropyLogits is SmoothedCrossEntropy(LogSoftmax(logits), …)
// in one op, for training: with lse the row's log-sum-exp,
//
//	loss_i = lse_i - (1-ε)·logits[i, t_i] - ε/vocab · Σ_v logits[i, v]
//	∂loss/∂logits[i, v] = (softmax(logits_i)_v - q_v) / N
//
// It reads the [rows, vocab] logits twice instead of the four passes of the
// two ops, and makes no log-probability tensor.
func SmoothedCrossEntropyLogits(logits, targets *G.Node, eps float64, pad int) (*G.Node, error) {
	if err := checkTargets(logits, targets); err != nil {
		return nil, err
	}
	if eps < 0 || eps >= 1 {
		return nil, errors.Errorf("cross-entropy: label smoothing %g not in [0, 1)", eps)
	}
	op := &kernelOp{
		name:    fmt.Sprintf("smoothed_cross_entropy_logits(eps=%g,pad=%d)", eps, pad),
		arity:   2,
		sig:     signature(tensorType(0), tensorType(logits.Dims()), intTensorType(targets.Dims())),
		shape:   func([]tensor.Shape) (tensor.Shape, error) { return tensor.ScalarShape(), nil },
		diffWRT: []bool{true, false},
	}
	// lse holds each row's log-sum-exp from the forward pass for the backward.
	var lse []float64
	op.scalar = func(in []*tensor.Dense) (float64, error) {
		lse = slices.Grow(lse[:0], len(in[1].Data().([]int)))[:len(in[1].Data().([]int))]
		switch x := in[0].Data().(type) {
		case []float32:
			return crossEntropyLogits(x, in[1].Data().([]int), lse, eps, pad)
		default:
			return crossEntropyLogits(x.([]float64), in[1].Data().([]int), lse, eps, pad)
		}
	}
	op.diff = func(in G.Nodes, _, dl *G.Node) (G.Nodes, error) {
		back := &kernelOp{
			name:  fmt.Sprintf("smoothed_cross_entropy_logits_grad(eps=%g,pad=%d)", eps, pad),
			arity: 3,
			sig:   signature(tensorType(logits.Dims()), tensorType(logits.Dims()), intTensorType(targets.Dims()), tensorType(0)),
			shape: sameShape,
		}
		back.forward = func(d *tensor.Dense, in []*tensor.Dense) error {
			dl := scalarOf(in[2])
			switch dd := d.Data().(type) {
			case []float32:
				crossEntropyLogitsBackward(dd, in[0].Data().([]float32), in[1].Data().([]int), lse, dl, eps, pad)
			case []float64:
				crossEntropyLogitsBackward(dd, in[0].Data().([]float64), in[1].Data().([]int), lse, dl, eps, pad)
			}
			return nil
		}
		d, err := apply(back, in[0], in[1], dl)
		return G.Nodes{d, nil}, err
	}
	return apply(op, logits, targets)
}

// logSumExp is log Σ exp(x_j), computed from the row's maximum.
func logSumExp[T float](x []T) float64 {
	m := rowMax(x)
	return float64(m) + math.Log(expShift(nil, x, m))
}

// crossEntropyLogits is the fused loss; it stores each row's log-sum-exp in lse.
func crossEntropyLogits[T float](x []T, targets []int, lse []float64, eps float64, pad int) (float64, error) {
	return smoothedLoss(x, targets, eps, pad, func(i int, row []T) float64 {
		lse[i] = logSumExp(row)
		return lse[i]
	})
}

// crossEntropyLogitsBackward is the fused loss's gradient, given the forward
// pass's log-sum-exps.
func crossEntropyLogitsBackward[T float](d, x []T, targets []int, lse []float64, dl, eps float64, pad int) {
	vocab := len(d) / len(targets)
	scale := dl / float64(max(countTargets(targets, pad), 1))
	for i, t := range targets {
		row, dr := x[i*vocab:(i+1)*vocab], d[i*vocab:(i+1)*vocab]
		if t == pad {
			clear(dr)
			continue
		}
		// dr = s·(softmax(row) - q), the softmax being e^(row - lse).
		expShift(dr, row, T(lse[i]))
		s, q := T(scale), T(eps/float64(vocab))
		for v, p := range dr {
			dr[v] = s * (p - q)
		}
		dr[t] -= s * T(1-eps)
	}
}
