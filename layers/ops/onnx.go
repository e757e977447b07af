package ops

import (
	"math"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/graph"
)

// The ONNX forms (graph.Op.ONNX) of this package's ops, in
// graph.ONNXOpset: each function's nodes compute what the op of the same
// name computes. The ops of gradients and of the training loss have none.

// headsONNX is the form of SplitHeads (split) and MergeHeads:
//
//	split: [b, t, h·k] → Reshape [b, t, h, k] → Transpose → [b, h, t, k]
//	merge: [b, h, t, k] → Transpose [b, t, h, k] → Reshape → [b, t, h·k]
func headsONNX(split bool) graph.ONNXForm {
	return func(b *graph.ONNXBuilder, y graph.ONNXValue, x []graph.ONNXValue) (string, error) {
		if split {
			return byHeads(b, x[0], seq, y.Shape[1], false).Name, nil
		}
		return seqLaid(b, x[0].Name, y.Shape), nil
	}
}

// headProductONNX is the form of a head product whose output has the
// product's every head (the forward ones; a gradient's output of grouped
// heads has none): each operand is made [batch, heads, rows, cols]
// (Reshape and Transpose of the layout seq), transposed as asked, and for
// grouped heads viewed as [batch, g, heads/g, rows, cols] (the operand of g
// heads as [batch, g, 1, rows, cols]), so that ONNX's MatMul broadcasts a
// key/value head over its group; its output is laid out back as l.c.
func headProductONNX(l headLayouts, transA, transB bool, heads [3]int) graph.ONNXForm {
	return func(b *graph.ONNXBuilder, y graph.ONNXValue, x []graph.ONNXValue) (string, error) {
		all, g := heads[2], min(heads[0], heads[1])
		if all%g != 0 || heads[0] != all && heads[0] != g || heads[1] != all && heads[1] != g {
			return "", errors.Errorf("heads %v: want the operands' heads to be %d or one number g dividing it", heads, all)
		}
		a := grouped(b, byHeads(b, x[0], l.a, heads[0], transA), all, g)
		c := grouped(b, byHeads(b, x[1], l.b, heads[1], transB), all, g)
		prod := b.Op("MatMul", []string{a.Name, c.Name}, nil)
		batch, m, n := y.Shape[0], a.Shape[len(a.Shape)-2], c.Shape[len(c.Shape)-1]
		if g != all {
			prod = b.Op("Reshape", []string{prod, b.Ints(batch, all, m, n)}, nil)
		}
		if l.c == byHead {
			return prod, nil
		}
		return seqLaid(b, prod, y.Shape), nil
	}
}

// seqLaid is v [batch, heads, rows, cols] laid out as seq: Transpose to
// [batch, rows, heads, cols], Reshape to shape [batch, rows, heads·cols].
func seqLaid(b *graph.ONNXBuilder, v string, shape []int) string {
	return b.Op("Reshape", []string{b.Op("Transpose", []string{v}, map[string]any{"perm": []int{0, 2, 1, 3}}), b.Ints(shape...)}, nil)
}

// byHeads is the operand v of the layout l and n heads as [batch, n, rows,
// cols], transposed to [batch, n, cols, rows] if trans.
func byHeads(b *graph.ONNXBuilder, v graph.ONNXValue, l headLayout, n int, trans bool) graph.ONNXValue {
	s := v.Shape
	if l == seq { // [batch, rows, n·cols]
		r := b.Op("Reshape", []string{v.Name, b.Ints(s[0], s[1], n, s[2]/n)}, nil)
		s = []int{s[0], n, s[1], s[2] / n}
		v = graph.ONNXValue{Name: b.Op("Transpose", []string{r}, map[string]any{"perm": []int{0, 2, 1, 3}}), Dtype: v.Dtype, Shape: s}
	}
	if trans {
		s = []int{s[0], s[1], s[3], s[2]}
		v = graph.ONNXValue{Name: graph.LastTwoSwapped(b, v, true), Dtype: v.Dtype, Shape: s}
	}
	return v
}

// grouped is v [batch, n, rows, cols] of a product of all heads viewed as
// [batch, g, all/g, rows, cols] (n = all) or [batch, g, 1, rows, cols] (n =
// g); v itself when g = all.
func grouped(b *graph.ONNXBuilder, v graph.ONNXValue, all, g int) graph.ONNXValue {
	if g == all {
		return v
	}
	s := v.Shape
	shape := []int{s[0], g, s[1] / g, s[2], s[3]}
	return graph.ONNXValue{Name: b.Op("Reshape", []string{v.Name, b.Ints(shape...)}, nil), Dtype: v.Dtype, Shape: shape}
}

// addPositionsONNX is AddPositions' form: x plus the first len rows of pe,
// broadcast over the batch.
func addPositionsONNX(b *graph.ONNXBuilder, _ graph.ONNXValue, x []graph.ONNXValue) (string, error) {
	pe, n := x[1].Name, x[0].Shape[1]
	if x[1].Shape[0] != n {
		pe = b.Op("Slice", []string{pe, b.Ints(0), b.Ints(n), b.Ints(0)}, nil)
	}
	return b.Op("Add", []string{x[0].Name, pe}, nil), nil
}

// setSlotONNX is SetSlot's form: ONNX's ScatterElements along the
// next-to-last axis, of x's rows at indices that all hold the slot. A slot
// outside the cache is an error when ONNX Runtime runs it, as here.
func setSlotONNX(b *graph.ONNXBuilder, _ graph.ONNXValue, x []graph.ONNXValue) (string, error) {
	cache, rows, slot := x[0], x[1], x[2]
	ones := make([]int, len(rows.Shape))
	for i := range ones {
		ones[i] = 1
	}
	at := b.Op("Reshape", []string{slot.Name, b.Ints(ones...)}, nil)
	at = b.Op("Expand", []string{at, b.Ints(rows.Shape...)}, nil)
	return b.Op("ScatterElements", []string{cache.Name, at, rows.Name}, map[string]any{"axis": len(ones) - 2}), nil
}

// idsMaskONNX is the form of PaddingMask (causal false) and CausalMask:
// -Inf where an id is pad, 0 elsewhere, as [batch, 1, 1, len], plus, for
// the causal mask, the constant [1, 1, len, len] that is -Inf above the
// diagonal.
func idsMaskONNX(pad int, causal bool) graph.ONNXForm {
	return func(b *graph.ONNXBuilder, _ graph.ONNXValue, x []graph.ONNXValue) (string, error) {
		s := x[0].Shape
		isPad := b.Op("Equal", []string{x[0].Name, b.Ints(pad)}, nil)
		m := b.Op("Where", []string{isPad, b.Scalar(math.Inf(-1)), b.Scalar(0)}, nil)
		m = b.Op("Reshape", []string{m, b.Ints(s[0], 1, 1, s[1])}, nil)
		if !causal {
			return m, nil
		}
		n := s[1]
		future := make([]float64, n*n)
		for i := range n {
			for j := i + 1; j < n; j++ {
				future[i*n+j] = math.Inf(-1)
			}
		}
		return b.Op("Add", []string{m, b.Constant(graph.FromFloat64s(b.Dtype(), future, 1, 1, n, n))}, nil), nil
	}
}

// targetScoresONNX is TargetScores' form: for every row of logits and its
// target t, the log-probability of t (ONNX's LogSoftmax, then
// GatherElements) and 1 if t is the first of the row's largest logits
// (ArgMax), both 0 where t is pad. A target outside the vocabulary is an
// error when ONNX Runtime runs it, as here.
func targetScoresONNX(pad int) graph.ONNXForm {
	return func(b *graph.ONNXBuilder, y graph.ONNXValue, x []graph.ONNXValue) (string, error) {
		rows, vocab := y.Shape[0], x[0].Shape[len(x[0].Shape)-1]
		logits := b.Op("Reshape", []string{x[0].Name, b.Ints(rows, vocab)}, nil)
		t := b.Op("Reshape", []string{x[1].Name, b.Ints(rows, 1)}, nil)
		logp := b.Op("GatherElements", []string{b.Op("LogSoftmax", []string{logits}, map[string]any{"axis": -1}), t}, map[string]any{"axis": 1})
		top := b.Op("ArgMax", []string{logits}, map[string]any{"axis": 1, "keepdims": 1, "select_last_index": 0})
		best := b.Cast(b.Op("Equal", []string{top, t}, nil), b.Dtype())
		scores := b.Op("Concat", []string{logp, best}, map[string]any{"axis": 1})
		isPad := b.Op("Equal", []string{t, b.Ints(pad)}, nil)
		return b.Op("Where", []string{isPad, b.Scalar(0), scores}, nil), nil
	}
}
