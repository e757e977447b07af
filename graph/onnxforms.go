package graph

// The ONNX forms (Op.ONNX) of this package's ops, in ONNXOpset: each
// function's nodes compute what the op of the same name computes. The ops
// of gradients and dropout have none: an evaluation graph holds neither.

// onnxUnary is the form of an op that is the ONNX operator op of its one
// input: Relu, Exp, Log, Sqrt, Tanh, Sigmoid.
func onnxUnary(op string) ONNXForm {
	return func(b *ONNXBuilder, _ ONNXValue, x []ONNXValue) (string, error) {
		return b.Op(op, []string{x[0].Name}, nil), nil
	}
}

// siluONNX is SiLU's form, x·σ(x).
func siluONNX(b *ONNXBuilder, _ ONNXValue, x []ONNXValue) (string, error) {
	return b.Op("Mul", []string{x[0].Name, b.Op("Sigmoid", []string{x[0].Name}, nil)}, nil), nil
}

// geluONNX is GELU's form, x/2 · (1 + erf(x/√2)) (ONNX's Gelu is of
// opset 20).
func geluONNX(b *ONNXBuilder, _ ONNXValue, x []ONNXValue) (string, error) {
	erf := b.Op("Erf", []string{b.Op("Mul", []string{x[0].Name, b.Scalar(1 / sqrt2)}, nil)}, nil)
	half := b.Op("Mul", []string{x[0].Name, b.Scalar(0.5)}, nil)
	return b.Op("Mul", []string{half, b.Op("Add", []string{erf, b.Scalar(1)}, nil)}, nil), nil
}

// sqrt2 is √2.
const sqrt2 = 1.4142135623730951

// binaryONNX is the form of the binary op k: ONNX's Add, Sub, Mul and Div
// broadcast as NumPy does, as k does.
func binaryONNX(k binary) ONNXForm {
	op := [...]string{add: "Add", sub: "Sub", mul: "Mul", div: "Div"}[k]
	return func(b *ONNXBuilder, _ ONNXValue, x []ONNXValue) (string, error) {
		return b.Op(op, []string{x[0].Name, x[1].Name}, nil), nil
	}
}

// softmaxONNX is Softmax's form: ONNX's Softmax of scale·x + mask, and
// zeros in the rows whose largest element is -Inf (all masked), where
// ONNX's gives NaN.
func softmaxONNX(scale float64) ONNXForm {
	return func(b *ONNXBuilder, _ ONNXValue, x []ONNXValue) (string, error) {
		z := x[0].Name
		if scale != 1 {
			z = b.Op("Mul", []string{z, b.Scalar(scale)}, nil)
		}
		if len(x) == 2 {
			z = b.Op("Add", []string{z, x[1].Name}, nil)
		}
		p := b.Op("Softmax", []string{z}, map[string]any{"axis": -1})
		top := b.Op("ReduceMax", []string{z}, map[string]any{"axes": []int{-1}, "keepdims": 1})
		masked := b.Op("IsInf", []string{top}, map[string]any{"detect_positive": 0})
		return b.Op("Where", []string{masked, b.Scalar(0), p}, nil), nil
	}
}

// logSoftmaxONNX is LogSoftmax's form.
func logSoftmaxONNX(b *ONNXBuilder, _ ONNXValue, x []ONNXValue) (string, error) {
	return b.Op("LogSoftmax", []string{x[0].Name}, map[string]any{"axis": -1}), nil
}

// normalizeONNX is the form of a normalizing op of the form f: of x, or
// of the sum x + r, layer normalization (ONNX's LayerNormalization, with
// the bias when the op has one) or, without centering, RMSNorm:
//
//	y = g ⊙ x / sqrt(mean(x²) + eps) (+ b)
func normalizeONNX(f normForm) ONNXForm {
	return func(b *ONNXBuilder, _ ONNXValue, x []ONNXValue) (string, error) {
		v, params := x[0].Name, x[f.firstParam():]
		if f.sum {
			v = b.Op("Add", []string{v, x[1].Name}, nil)
		}
		if f.center {
			in := []string{v, params[0].Name}
			if len(params) == 2 {
				in = append(in, params[1].Name)
			}
			return b.Op("LayerNormalization", in, map[string]any{"axis": -1, "epsilon": f.eps}), nil
		}
		ms := b.Op("ReduceMean", []string{b.Op("Mul", []string{v, v}, nil)}, map[string]any{"axes": []int{-1}, "keepdims": 1})
		rms := b.Op("Sqrt", []string{b.Op("Add", []string{ms, b.Scalar(f.eps)}, nil)}, nil)
		y := b.Op("Mul", []string{b.Op("Div", []string{v, rms}, nil), params[0].Name}, nil)
		if len(params) == 2 {
			y = b.Op("Add", []string{y, params[1].Name}, nil)
		}
		return y, nil
	}
}

// productONNX is the form of the product pr, y = f(x·op(w) + b): ONNX's
// MatMul (of w transposed for transW), Add and Relu.
func productONNX(pr product) ONNXForm {
	return func(b *ONNXBuilder, _ ONNXValue, x []ONNXValue) (string, error) {
		w := x[1].Name
		if pr.transW {
			w = b.Op("Transpose", []string{w}, map[string]any{"perm": []int{1, 0}})
		}
		y := b.Op("MatMul", []string{x[0].Name, w}, nil)
		if len(x) == 3 {
			y = b.Op("Add", []string{y, x[2].Name}, nil)
		}
		if pr.relu {
			y = b.Op("Relu", []string{y}, nil)
		}
		return y, nil
	}
}

// batchedONNX is BatchedMatMul's form: ONNX's MatMul, whose batch axes
// broadcast as BatchedMatMul's do, of the operands whose last two axes are
// transposed where asked.
func batchedONNX(transA, transB bool) ONNXForm {
	return func(b *ONNXBuilder, _ ONNXValue, x []ONNXValue) (string, error) {
		return b.Op("MatMul", []string{LastTwoSwapped(b, x[0], transA), LastTwoSwapped(b, x[1], transB)}, nil), nil
	}
}

// LastTwoSwapped is, for an ONNX form, the value v with its last two axes
// swapped (ONNX's Transpose) if swap, else v.
func LastTwoSwapped(b *ONNXBuilder, v ONNXValue, swap bool) string {
	if !swap {
		return v.Name
	}
	perm := make([]int, len(v.Shape))
	for i := range perm {
		perm[i] = i
	}
	n := len(perm)
	perm[n-2], perm[n-1] = n-1, n-2
	return b.Op("Transpose", []string{v.Name}, map[string]any{"perm": perm})
}

// reshapeONNX is Reshape's form, to the shape y has.
func reshapeONNX(b *ONNXBuilder, y ONNXValue, x []ONNXValue) (string, error) {
	return b.Op("Reshape", []string{x[0].Name, b.Ints(y.Shape...)}, nil), nil
}

// transposeONNX is Transpose's form.
func transposeONNX(perm []int) ONNXForm {
	return func(b *ONNXBuilder, _ ONNXValue, x []ONNXValue) (string, error) {
		return b.Op("Transpose", []string{x[0].Name}, map[string]any{"perm": perm}), nil
	}
}

// sliceONNX is Slice's form, [start, end) of axis.
func sliceONNX(axis, start, end int) ONNXForm {
	return func(b *ONNXBuilder, _ ONNXValue, x []ONNXValue) (string, error) {
		return b.Op("Slice", []string{x[0].Name, b.Ints(start), b.Ints(end), b.Ints(axis)}, nil), nil
	}
}

// concatONNX is Concat's form along axis.
func concatONNX(axis int) ONNXForm {
	return func(b *ONNXBuilder, _ ONNXValue, x []ONNXValue) (string, error) {
		in := make([]string, len(x))
		for i, v := range x {
			in[i] = v.Name
		}
		return b.Op("Concat", in, map[string]any{"axis": axis}), nil
	}
}

// reduceONNX is the form of the reduction r along axis: ReduceSum (whose
// axes are an input in opset 13 and later), ReduceMean and ReduceMax
// (whose axes are an attribute until opset 18).
func reduceONNX(r reduction, axis int, keep bool) ONNXForm {
	return func(b *ONNXBuilder, _ ONNXValue, x []ONNXValue) (string, error) {
		keepdims := 0
		if keep {
			keepdims = 1
		}
		if r == sumAxis {
			return b.Op("ReduceSum", []string{x[0].Name, b.Ints(axis)}, map[string]any{"keepdims": keepdims}), nil
		}
		op := map[reduction]string{meanAxis: "ReduceMean", maxAxis: "ReduceMax"}[r]
		return b.Op(op, []string{x[0].Name}, map[string]any{"axes": []int{axis}, "keepdims": keepdims}), nil
	}
}

// embedONNX is Embed's form: ONNX's Gather of the table's rows, scaled.
// An id outside the table is an error when ONNX Runtime runs it, as here.
func embedONNX(scale float64) ONNXForm {
	return func(b *ONNXBuilder, _ ONNXValue, x []ONNXValue) (string, error) {
		y := b.Op("Gather", []string{x[0].Name, x[1].Name}, map[string]any{"axis": 0})
		if scale != 1 {
			y = b.Op("Mul", []string{y, b.Scalar(scale)}, nil)
		}
		return y, nil
	}
}
