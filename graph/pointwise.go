package graph

import (
	"math"

	G "gorgonia.org/gorgonia"

	"github.com/transformer-go/transformer/graph/internal/vexp"
	"github.com/transformer-go/transformer/graph/internal/vrow"
)

// pointwiseKernels compute an elementwise function and its gradient in one
// element type: f writes y = f(x); df writes dx = dy ⊙ f'(x), f' written in
// terms of v, which is x, or y for the functions whose derivative is best
// written in their value (exp, tanh, …).
type pointwiseKernels[T Float] struct {
	f  func(y, x []T)
	df func(dx, v, dy []T)
}

// pointwise applies the elementwise function name, of the ONNX form
// form, to x; fromY says that df reads y rather than x.
func pointwise(name string, form ONNXForm, x *G.Node, fromY bool, k32 pointwiseKernels[float32], k64 pointwiseKernels[float64]) (*G.Node, error) {
	op := Op{
		Name:   name,
		Arity:  1,
		Shape:  SameShape,
		F32:    k32.kernels(fromY),
		F64:    k64.kernels(fromY),
		Device: pointwiseDevice(name, fromY),
		ONNX:   form,
		Diff:   []bool{true},
	}
	if fromY {
		op.SaveOutput = true
	} else {
		op.Save = []int{0}
	}
	return op.Apply(x)
}

func (k pointwiseKernels[T]) kernels(fromY bool) Kernels[T] {
	return Kernels[T]{
		Forward: func(y Operand[T], x []Operand[T]) error {
			forSpans(len(y.Data), func(lo, hi int) { k.f(y.Data[lo:hi], x[0].Data[lo:hi]) })
			return nil
		},
		Backward: func(_ int, dx Operand[T], x []Operand[T], y, dy Operand[T]) error {
			v := x[0].Data
			if fromY {
				v = y.Data
			}
			forSpans(len(dx.Data), func(lo, hi int) { k.df(dx.Data[lo:hi], v[lo:hi], dy.Data[lo:hi]) })
			return nil
		},
	}
}

// ReLU is max(0, x) elementwise (the feed-forward network's activation);
// dx = dy where x > 0, else 0.
func ReLU(x *G.Node) (*G.Node, error) {
	return pointwise("relu", onnxUnary("Relu"), x, false,
		pointwiseKernels[float32]{vrow.ReLU, vrow.ReLUGrad},
		pointwiseKernels[float64]{vrow.ReLU64, vrow.ReLUGrad64})
}

// reluGradFromOutput is the gradient of a ReLU given its output y rather
// than its input: dz = dy where y > 0, else 0. y > 0 exactly where the
// input is (ReLU keeps positive inputs and makes the others +0), so this is
// ReLU's own backward kernel with y in place of x. It has no gradient of
// its own.
func reluGradFromOutput(y, dy *G.Node) (*G.Node, error) {
	return Op{
		Name:   "relu_grad",
		Arity:  2,
		Shape:  SameShape,
		F32:    reluGradKernels(vrow.ReLUGrad),
		F64:    reluGradKernels(vrow.ReLUGrad64),
		Device: reluGradDevice,
	}.Apply(y, dy)
}

// reluGradKernels runs df(dz, y, dy) over spans of the elements.
func reluGradKernels[T Float](df func(dx, x, dy []T)) Kernels[T] {
	return Kernels[T]{Forward: func(dz Operand[T], in []Operand[T]) error {
		forSpans(len(dz.Data), func(lo, hi int) { df(dz.Data[lo:hi], in[0].Data[lo:hi], in[1].Data[lo:hi]) })
		return nil
	}}
}

// Exp is eˣ elementwise; dx = dy·y.
func Exp(x *G.Node) (*G.Node, error) {
	return pointwise("exp", onnxUnary("Exp"), x, true,
		pointwiseKernels[float32]{vexp.Exps, mulInto[float32]},
		pointwiseKernels[float64]{expInto, mulInto[float64]})
}

func expInto(y, x []float64) {
	for i, v := range x {
		y[i] = math.Exp(v)
	}
}

// mulInto writes dx = v ⊙ dy.
func mulInto[T Float](dx, v, dy []T) {
	for i, g := range dy {
		dx[i] = g * v[i]
	}
}

// Log is the natural logarithm elementwise; dx = dy / x.
func Log(x *G.Node) (*G.Node, error) {
	return pointwise("log", onnxUnary("Log"), x, false,
		pointwiseKernels[float32]{logInto[float32], logGrad[float32]},
		pointwiseKernels[float64]{logInto[float64], logGrad[float64]})
}

func logInto[T Float](y, x []T) {
	for i, v := range x {
		y[i] = T(math.Log(float64(v)))
	}
}

func logGrad[T Float](dx, x, dy []T) {
	for i, g := range dy {
		dx[i] = g / x[i]
	}
}

// Sqrt is √x elementwise; dx = dy / 2y.
func Sqrt(x *G.Node) (*G.Node, error) {
	return pointwise("sqrt", onnxUnary("Sqrt"), x, true,
		pointwiseKernels[float32]{sqrtInto[float32], sqrtGrad[float32]},
		pointwiseKernels[float64]{sqrtInto[float64], sqrtGrad[float64]})
}

func sqrtInto[T Float](y, x []T) {
	for i, v := range x {
		y[i] = T(math.Sqrt(float64(v)))
	}
}

func sqrtGrad[T Float](dx, y, dy []T) {
	for i, g := range dy {
		dx[i] = g / (2 * y[i])
	}
}

// Tanh is the hyperbolic tangent elementwise; dx = dy·(1 - y²).
func Tanh(x *G.Node) (*G.Node, error) {
	return pointwise("tanh", onnxUnary("Tanh"), x, true,
		pointwiseKernels[float32]{tanhInto[float32], tanhGrad[float32]},
		pointwiseKernels[float64]{tanhInto[float64], tanhGrad[float64]})
}

func tanhInto[T Float](y, x []T) {
	for i, v := range x {
		y[i] = T(math.Tanh(float64(v)))
	}
}

func tanhGrad[T Float](dx, y, dy []T) {
	for i, g := range dy {
		dx[i] = g * (1 - y[i]*y[i])
	}
}

// Sigmoid is the logistic function σ(x) = 1 / (1 + e⁻ˣ) elementwise;
// dx = dy·y·(1 - y).
func Sigmoid(x *G.Node) (*G.Node, error) {
	return pointwise("sigmoid", onnxUnary("Sigmoid"), x, true,
		pointwiseKernels[float32]{sigmoid32, sigmoidGrad[float32]},
		pointwiseKernels[float64]{sigmoidInto, sigmoidGrad[float64]})
}

// sigmoid is σ(v), computed without overflow on either side.
func sigmoid(v float64) float64 {
	if v >= 0 {
		return 1 / (1 + math.Exp(-v))
	}
	e := math.Exp(v)
	return e / (1 + e)
}

func sigmoidInto(y, x []float64) {
	for i, v := range x {
		y[i] = sigmoid(v)
	}
}

// sigmoid32 is σ(x) = 1 / (1 + e⁻ˣ) with the exponentials eight at a time
// (vexp): e⁻ˣ overflows to +Inf where σ is 0.
func sigmoid32(y, x []float32) {
	for i, v := range x {
		y[i] = -v
	}
	vexp.Exps(y, y)
	for i, e := range y {
		y[i] = 1 / (1 + e)
	}
}

func sigmoidGrad[T Float](dx, y, dy []T) {
	for i, g := range dy {
		dx[i] = g * y[i] * (1 - y[i])
	}
}

// SiLU is the sigmoid-weighted linear unit x·σ(x) (swish; Elfwing et al.,
// 2018, the gate of SwiGLU); dx = dy·σ(x)·(1 + x·(1 - σ(x))).
func SiLU(x *G.Node) (*G.Node, error) {
	return pointwise("silu", siluONNX, x, false,
		pointwiseKernels[float32]{silu32, siluGrad32},
		pointwiseKernels[float64]{siluInto, siluGrad})
}

func siluInto(y, x []float64) {
	for i, v := range x {
		y[i] = v * sigmoid(v)
	}
}

func siluGrad(dx, x, dy []float64) {
	for i, g := range dy {
		s := sigmoid(x[i])
		dx[i] = g * s * (1 + x[i]*(1-s))
	}
}

func silu32(y, x []float32) {
	sigmoid32(y, x)
	for i, v := range x {
		y[i] *= v
	}
}

func siluGrad32(dx, x, dy []float32) {
	sigmoid32(dx, x)
	for i, s := range dx {
		dx[i] = dy[i] * s * (1 + x[i]*(1-s))
	}
}

// GELU is the Gaussian error linear unit x·Φ(x) elementwise (Hendrycks &
// Gimpel, 2016), Φ the standard normal distribution function, exactly (as
// PyTorch's default, not the tanh approximation):
//
//	GELU(x) = x/2 · (1 + erf(x/√2)),   dx = dy·(Φ(x) + x·φ(x)),  φ(x) = e^(-x²/2)/√(2π)
func GELU(x *G.Node) (*G.Node, error) {
	return pointwise("gelu", geluONNX, x, false,
		pointwiseKernels[float32]{geluInto[float32], geluGrad[float32]},
		pointwiseKernels[float64]{geluInto[float64], geluGrad[float64]})
}

func geluInto[T Float](y, x []T) {
	for i, v := range x {
		y[i] = T(float64(v) * normalCDF(float64(v)))
	}
}

func geluGrad[T Float](dx, x, dy []T) {
	for i, g := range dy {
		v := float64(x[i])
		dx[i] = g * T(normalCDF(v)+v*math.Exp(-v*v/2)/math.Sqrt(2*math.Pi))
	}
}

// normalCDF is Φ(v) = (1 + erf(v/√2)) / 2.
func normalCDF(v float64) float64 { return 0.5 * (1 + math.Erf(v/math.Sqrt2)) }
