package graph

import (
	"fmt"
	"math"

	"github.com/pkg/errors"
	"github.com/transformer-go/transformer/graph/internal/vexp"
	"github.com/transformer-go/transformer/graph/internal/vrow"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Softmax returns softmax(scale·x + mask) over the last axis of x:
//
//	y_j = exp(scale·x_j + mask_j - m) / Σ_k exp(scale·x_k + mask_k - m),  m = max_k (scale·x_k + mask_k)
//
// Subtracting each row's own maximum m keeps every exponent ≤ 0, so rows of any
// range are exact (Gorgonia's SoftMax takes one maximum for the whole tensor and
// returns NaN when rows differ by more than ~88 in float32).
//
// mask is additive (0 to keep, -Inf to drop) and may be nil; its shape has the
// dimensions of x, each equal to x's or 1 (broadcast). A row whose every entry is
// masked is all zeros, with zero gradient: a query with nothing to attend to
// contributes nothing, instead of NaN.
func Softmax(x, mask *G.Node, scale float64) (*G.Node, error) {
	op := Op{
		Name:       fmt.Sprintf("softmax(scale=%g,masked=%t)", scale, mask != nil),
		Arity:      1,
		Shape:      firstShape,
		Diff:       []bool{true},
		SaveOutput: true,
	}
	in := G.Nodes{x}
	lead := x.Shape()[:x.Dims()-1]
	ms := lead // without a mask, a walk of the rows alone
	if mask != nil {
		if err := checkBroadcast(x.Shape(), mask.Shape()); err != nil {
			return nil, errors.Wrap(err, "softmax mask")
		}
		op.Arity, op.Diff, ms = 2, []bool{true, false}, mask.Shape()[:mask.Dims()-1]
		in = append(in, mask)
	}
	// rows walks the rows of x and, along with them, the mask's rows.
	rows := newBcast(lead, ms)
	op.F32 = softmaxKernels[float32](rows, scale)
	op.F64 = softmaxKernels[float64](rows, scale)
	op.Device = softmaxDevice(scale)
	op.ONNX = softmaxONNX(scale)
	return op.Apply(in...)
}

// softmaxKernels are Softmax's kernels; rows walks the rows of x and of the mask.
func softmaxKernels[T Float](rows bcast, scale float64) Kernels[T] {
	return Kernels[T]{
		Forward: func(y Operand[T], x []Operand[T]) error {
			var mask []T
			if len(x) == 2 {
				mask = x[1].Data
			}
			softmaxRows(y.Data, x[0].Data, mask, lastDim(y.Shape), rows, scale)
			return nil
		},
		Backward: func(_ int, dx Operand[T], _ []Operand[T], y, dy Operand[T]) error {
			softmaxBackward(dx.Data, y.Data, dy.Data, lastDim(y.Shape), scale, false)
			return nil
		},
	}
}

// LogSoftmax returns log(softmax(x)) over the last axis of x, computed as
// x_j - m - log Σ_k exp(x_k - m) with m the row's maximum. It is a different op
// from Softmax (Gorgonia's LogSoftMax hashes like its SoftMax, so a graph holding
// both of one node silently gets softmax twice).
func LogSoftmax(x *G.Node) (*G.Node, error) {
	return Op{
		Name:       "log_softmax",
		Arity:      1,
		Shape:      SameShape,
		F32:        logSoftmaxKernels[float32](),
		F64:        logSoftmaxKernels[float64](),
		Device:     logSoftmaxDevice,
		ONNX:       logSoftmaxONNX,
		Diff:       []bool{true},
		SaveOutput: true,
	}.Apply(x)
}

func logSoftmaxKernels[T Float]() Kernels[T] {
	return Kernels[T]{
		Forward: func(y Operand[T], x []Operand[T]) error {
			logSoftmaxRows(y.Data, x[0].Data, lastDim(x[0].Shape))
			return nil
		},
		Backward: func(_ int, dx Operand[T], _ []Operand[T], y, dy Operand[T]) error {
			softmaxBackward(dx.Data, y.Data, dy.Data, lastDim(y.Shape), 1, true)
			return nil
		},
	}
}

// softmaxRows writes y = softmax(scale·x + mask) row by row, rows walking
// the rows of x and of the mask, several goroutines each taking runs of
// rows; float32's runs go to vexp.SoftmaxRows, which takes short rows
// several at a time.
func softmaxRows[T Float](y, x, mask []T, n int, rows bcast, scale float64) {
	if y32, ok := any(y).([]float32); ok {
		x32, m32 := any(x).([]float32), any(mask).([]float32)
		rows.parallel(n, func(r0 int, off, st []int, count int) {
			var m []float32
			if m32 != nil {
				m = m32[off[0]*n:]
			}
			vexp.SoftmaxRows(y32[r0*n:(r0+count)*n], x32[r0*n:(r0+count)*n], m, n, st[0]*n, float32(scale))
		})
		return
	}
	s := T(scale)
	rows.parallel(n, func(r0 int, off, st []int, count int) {
		for i := range count {
			r, mo := r0+i, (off[0]+i*st[0])*n
			yr := y[r*n : (r+1)*n]
			scaleInto(yr, x[r*n:(r+1)*n], s)
			if mask != nil {
				addInto(yr, mask[mo:mo+n])
			}
			softmaxInPlace(yr)
		}
	})
}

// softmaxInPlace replaces the logits v by their softmax; all -Inf gives zeros.
func softmaxInPlace[T Float](v []T) {
	if len(v) == 0 {
		return
	}
	m := RowMax(v)
	if math.IsInf(float64(m), -1) {
		clear(v)
		return
	}
	scaleInto(v, v, T(1/ExpShift(v, v, m)))
}

// logSoftmaxRows writes y = log softmax(x) row by row, as
//
//	y_j = (x_j - m) - log Σ_k exp(x_k - m)
//
// subtracting the maximum m first: m + log Σ formed at the logits' magnitude
// would round (by up to 1e-3 in float32 for logits near 1e4, ONNX's
// test_logsoftmax_large_number) before the subtraction.
func logSoftmaxRows[T Float](y, x []T, n int) {
	forRows(x, n, func(lo, hi int) {
		for r := lo * n; r < hi*n; r += n {
			xr, yr := x[r:r+n], y[r:r+n]
			m := RowMax(xr)
			lse := T(math.Log(ExpShift(nil, xr, m)))
			addConst(yr, xr, -m)
			addConst(yr, yr, -lse)
		}
	})
}

// softmaxBackward is the backward pass of Softmax (log false) and LogSoftmax (log true):
//
//	softmax:     dx_j = scale · y_j (dy_j - Σ_k dy_k y_k)
//	log-softmax: dx_j = dy_j - exp(y_j) Σ_k dy_k
func softmaxBackward[T Float](dx, y, dy []T, n int, scale float64, log bool) {
	forRows(y, n, func(lo, hi int) { softmaxBackwardRows(dx, y, dy, n, scale, log, lo, hi) })
}

// softmaxBackwardRows is softmaxBackward for the rows [lo, hi).
func softmaxBackwardRows[T Float](dx, y, dy []T, n int, scale float64, log bool, lo, hi int) {
	for r := lo * n; r < hi*n; r += n {
		yr, dyr, dxr := y[r:r+n], dy[r:r+n], dx[r:r+n]
		var dot float64
		if log {
			dot = RowSum(dyr)
		} else {
			dot = rowDot(dyr, yr)
		}
		if log {
			ExpShift(dxr, yr, 0) // the softmax, e^y
			for j, p := range dxr {
				dxr[j] = dyr[j] - T(float64(p)*dot)
			}
			continue
		}
		for j := range yr {
			dxr[j] = T(scale * float64(yr[j]) * (float64(dyr[j]) - dot))
		}
	}
}

// checkBroadcast checks that m can be broadcast to s along every axis but the last.
func checkBroadcast(s, m tensor.Shape) error {
	if len(m) != len(s) {
		return errors.Errorf("shape %v cannot broadcast to %v: different number of dimensions", m, s)
	}
	for i := range s {
		if m[i] != s[i] && (m[i] != 1 || i == len(s)-1) {
			return errors.Errorf("shape %v cannot broadcast to %v (axis %d)", m, s, i)
		}
	}
	return nil
}

// lastDim is the size of the last axis of s.
func lastDim(s tensor.Shape) int {
	if len(s) == 0 {
		return 1
	}
	return s[len(s)-1]
}

// rowDot is Σ a⊙b, each product in the element type, summed in float64
// (float32 rows with vrow's kernels, others in four interleaved partial
// sums).
func rowDot[T Float](a, b []T) float64 {
	if a32, ok := any(a).([]float32); ok {
		return vrow.Dot(a32, any(b).([]float32))
	}
	var s0, s1, s2, s3 float64
	n := len(a) &^ 3
	b = b[:len(a)]
	for j := 0; j < n; j += 4 {
		s0 += float64(a[j] * b[j])
		s1 += float64(a[j+1] * b[j+1])
		s2 += float64(a[j+2] * b[j+2])
		s3 += float64(a[j+3] * b[j+3])
	}
	for j := n; j < len(a); j++ {
		s0 += float64(a[j] * b[j])
	}
	return (s0 + s1) + (s2 + s3)
}
