package graph

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// positive draws from U(0.5, 1.5): inputs of log, sqrt and divisors.
func positive(rng *rand.Rand, _ tensor.Shape, vals []float64) {
	for i := range vals {
		vals[i] = 0.5 + rng.Float64()
	}
}

// mathCases are the Scope's general tensor ops on small operands, each
// differentiated with respect to every operand.
func mathCases() []struct {
	name  string
	build func(s *Scope) *G.Node
} {
	p := func(s *Scope, name string, shape ...int) *G.Node { return s.Param(name, shape, Normal(1)) }
	pos := func(s *Scope, name string, shape ...int) *G.Node { return s.Param(name, shape, positive) }
	return []struct {
		name  string
		build func(s *Scope) *G.Node
	}{
		{"add, b broadcast", func(s *Scope) *G.Node { return s.Add(p(s, "a", 2, 3, 4), p(s, "b", 3, 1)) }},
		{"add, a broadcast", func(s *Scope) *G.Node { return s.Add(p(s, "a", 4), p(s, "b", 2, 3, 4)) }},
		{"add, both broadcast", func(s *Scope) *G.Node { return s.Add(p(s, "a", 2, 1, 4), p(s, "b", 3, 1)) }},
		{"sub, both broadcast", func(s *Scope) *G.Node { return s.Sub(p(s, "a", 2, 1, 4), p(s, "b", 1, 3, 4)) }},
		{"sub, equal", func(s *Scope) *G.Node { return s.Sub(p(s, "a", 3, 4), p(s, "b", 3, 4)) }},
		{"mul, equal", func(s *Scope) *G.Node { return s.Mul(p(s, "a", 3, 4), p(s, "b", 3, 4)) }},
		{"mul, both broadcast", func(s *Scope) *G.Node { return s.Mul(p(s, "a", 2, 1, 4), p(s, "b", 3, 1)) }},
		{"mul by a scalar", func(s *Scope) *G.Node { return s.Mul(p(s, "a", 2, 3), s.Scalar(-0.75)) }},
		{"div, b broadcast", func(s *Scope) *G.Node { return s.Div(p(s, "a", 2, 3, 4), pos(s, "b", 4)) }},
		{"div, a broadcast", func(s *Scope) *G.Node { return s.Div(p(s, "a", 3, 1), pos(s, "b", 2, 3, 4)) }},
		{"exp", func(s *Scope) *G.Node { return s.Exp(p(s, "x", 3, 5)) }},
		{"log", func(s *Scope) *G.Node { return s.Log(pos(s, "x", 3, 5)) }},
		{"sqrt", func(s *Scope) *G.Node { return s.Sqrt(pos(s, "x", 3, 5)) }},
		{"tanh", func(s *Scope) *G.Node { return s.Tanh(p(s, "x", 3, 5)) }},
		{"sigmoid", func(s *Scope) *G.Node { return s.Sigmoid(p(s, "x", 3, 5)) }},
		{"silu", func(s *Scope) *G.Node { return s.SiLU(p(s, "x", 3, 5)) }},
		{"gelu", func(s *Scope) *G.Node { return s.GELU(p(s, "x", 3, 5)) }},
		{"reshape", func(s *Scope) *G.Node { return s.Reshape(p(s, "x", 2, 3, 4), 4, -1) }},
		{"transpose", func(s *Scope) *G.Node { return s.Transpose(p(s, "x", 2, 3, 4), 2, 0, 1) }},
		{"transpose, last axis kept", func(s *Scope) *G.Node { return s.Transpose(p(s, "x", 2, 3, 4), 1, 0, 2) }},
		{"slice", func(s *Scope) *G.Node { return s.Slice(p(s, "x", 2, 5, 3), 1, 1, 4) }},
		{"slice, last axis", func(s *Scope) *G.Node { return s.Slice(p(s, "x", 2, 6), -1, 3, 6) }},
		{"concat", func(s *Scope) *G.Node { return s.Concat(1, p(s, "a", 2, 1, 3), p(s, "b", 2, 4, 3)) }},
		{"concat, last axis", func(s *Scope) *G.Node { return s.Concat(-1, p(s, "a", 2, 2), p(s, "b", 2, 3), p(s, "c", 2, 1)) }},
		{"sum", func(s *Scope) *G.Node { return s.Sum(p(s, "x", 2, 3, 4), 1, false) }},
		{"sum, kept", func(s *Scope) *G.Node { return s.Sum(p(s, "x", 2, 3, 4), -1, true) }},
		{"mean", func(s *Scope) *G.Node { return s.Mean(p(s, "x", 2, 3, 4), 0, false) }},
		{"max", func(s *Scope) *G.Node { return s.Max(p(s, "x", 2, 3, 4), 1, true) }},
		{"max, last axis", func(s *Scope) *G.Node { return s.Max(p(s, "x", 3, 5), -1, false) }},
		{"batched matmul, matrix b", func(s *Scope) *G.Node {
			return s.BatchedMatMul(p(s, "a", 2, 3, 4, 5), p(s, "b", 5, 2), false, false)
		}},
		{"batched matmul, both broadcast", func(s *Scope) *G.Node {
			return s.BatchedMatMul(p(s, "a", 2, 1, 4, 5), p(s, "b", 3, 6, 5), false, true)
		}},
		{"batched matmul, grouped heads", func(s *Scope) *G.Node {
			return s.BatchedMatMul(p(s, "q", 2, 2, 3, 4, 5), p(s, "k", 2, 2, 1, 6, 5), false, true)
		}},
		{"batched matmul, a transposed, broadcast", func(s *Scope) *G.Node {
			return s.BatchedMatMul(p(s, "a", 1, 5, 4), p(s, "b", 3, 5, 2), true, false)
		}},
		{"composition", func(s *Scope) *G.Node {
			// (x - mean(x)) / sqrt(mean((x - mean(x))²) + ε) · σ(g): a layer norm from parts.
			x := p(s, "x", 3, 6)
			c := s.Sub(x, s.Mean(x, -1, true))
			v := s.Mean(s.Mul(c, c), -1, true)
			return s.Mul(s.Div(c, s.Sqrt(s.Add(v, s.Scalar(1e-5)))), s.Sigmoid(p(s, "g", 6)))
		}},
	}
}

func TestMathGradients(t *testing.T) { checkMath(t) }

// TestMathGradientsInParts checks the general ops with every kernel split
// into parts of one element, spread over the goroutines: the gradients must
// still match finite differences (and the race detector see no race).
func TestMathGradientsInParts(t *testing.T) {
	defer SetGrain(SetGrain(1))
	checkMath(t)
}

// checkMath gradient-checks every one of mathCases.
func checkMath(t *testing.T) {
	for _, tc := range mathCases() {
		t.Run(tc.name, func(t *testing.T) {
			c := GradCheck{Build: tc.build, Seed: 3, Float32: true}
			if err := c.Run(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestBroadcastShape(t *testing.T) {
	tests := []struct {
		a, b, want tensor.Shape
	}{
		{tensor.Shape{2, 3, 4}, tensor.Shape{4}, tensor.Shape{2, 3, 4}},
		{tensor.Shape{2, 1, 4}, tensor.Shape{3, 1}, tensor.Shape{2, 3, 4}},
		{tensor.Shape{1}, tensor.Shape{5, 2}, tensor.Shape{5, 2}},
		{tensor.Shape{}, tensor.Shape{3}, tensor.Shape{3}},
		{tensor.Shape{2, 3}, tensor.Shape{3, 3}, nil},
	}
	for _, tc := range tests {
		got, err := BroadcastShape(tc.a, tc.b)
		if tc.want == nil {
			if err == nil {
				t.Errorf("%v with %v broadcast to %v, want an error", tc.a, tc.b, got)
			}
			continue
		}
		if err != nil || !got.Eq(tc.want) {
			t.Errorf("%v with %v: %v, %v; want %v", tc.a, tc.b, got, err, tc.want)
		}
	}
}

func TestMathValues(t *testing.T) {
	x := tensor.New(tensor.WithShape(2, 3), tensor.WithBacking([]float64{1, -2, 3, 0.5, 4, -1}))
	col := tensor.New(tensor.WithShape(2, 1), tensor.WithBacking([]float64{10, 20}))
	out := run(t, tensor.Float64, func(s *Scope) map[string]*G.Node {
		xc, cc := s.Constant("x", x), s.Constant("col", col)
		return map[string]*G.Node{
			"add":       s.Add(xc, cc),
			"div":       s.Div(cc, xc),
			"transpose": s.Transpose(xc, 1, 0),
			"slice":     s.Slice(xc, 1, 1, 3),
			"concat":    s.Concat(0, xc, s.Reshape(s.Slice(xc, 0, 0, 1), 1, 3)),
			"sum":       s.Sum(xc, 0, false),
			"max":       s.Max(xc, 1, false),
			"mean":      s.Mean(xc, 1, true),
		}
	})
	want := map[string][]float64{
		"add":       {11, 8, 13, 20.5, 24, 19},
		"div":       {10, -5, 10. / 3, 40, 5, -20},
		"transpose": {1, 0.5, -2, 4, 3, -1},
		"slice":     {-2, 3, 4, -1},
		"concat":    {1, -2, 3, 0.5, 4, -1, 1, -2, 3},
		"sum":       {1.5, 2, 2},
		"max":       {3, 4},
		"mean":      {2. / 3, 3.5 / 3},
	}
	for name, w := range want {
		assertClose(t, name, out[name].Data().([]float64), w, 1e-12)
	}
}

func TestMathShapeErrors(t *testing.T) {
	s := NewScope(newTestParams(t, tensor.Float32))
	x := s.Param("x", tensor.Shape{2, 3}, Ones)
	tests := []struct {
		name, want string
		node       func() (*G.Node, error)
	}{
		{"broadcast", "do not broadcast", func() (*G.Node, error) { return Mul(x, s.Param("y", tensor.Shape{3, 3}, Ones)) }},
		{"reshape size", "6 elements", func() (*G.Node, error) { return Reshape(x, 4, -1) }},
		{"two free sizes", "at most one -1", func() (*G.Node, error) { return Reshape(x, -1, -1) }},
		{"permutation", "not a permutation", func() (*G.Node, error) { return Transpose(x, 0, 0) }},
		{"slice range", "not within", func() (*G.Node, error) { return Slice(x, 1, 2, 4) }},
		{"axis", "out of range", func() (*G.Node, error) { return Sum(x, 2, false) }},
		{"concat", "differ elsewhere", func() (*G.Node, error) { return Concat(0, x, s.Param("z", tensor.Shape{2, 4}, Ones)) }},
		{"batched inner sizes", "inner sizes differ", func() (*G.Node, error) {
			return BatchedMatMul(s.Param("a", tensor.Shape{2, 3, 4}, Ones), s.Param("b", tensor.Shape{2, 5, 4}, Ones), false, false)
		}},
		{"batched batch axes", "batch axes", func() (*G.Node, error) {
			return BatchedMatMul(s.Param("c", tensor.Shape{2, 3, 4}, Ones), s.Param("d", tensor.Shape{3, 4, 4}, Ones), false, false)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tc.node(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}

// TestFloat64ConstantInFloat32Graph: a float64 constant serves a float32
// graph, and a float64 node from elsewhere is an error when the graph is built.
func TestFloat64ConstantInFloat32Graph(t *testing.T) {
	s := NewScope(newTestParams(t, tensor.Float32))
	x := s.Param("x", tensor.Shape{2}, Ones)
	c := s.Constant("c", tensor.New(tensor.WithShape(2), tensor.WithBacking([]float64{0.5, 2})))
	if c.Dtype() != tensor.Float32 {
		t.Fatalf("a float64 constant in a float32 graph is %v", c.Dtype())
	}
	y := s.Mul(x, c)
	p, err := Compile(nil, s, nil, map[string]*G.Node{"y": y})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Run(); err != nil {
		t.Fatal(err)
	}
	assertClose(t, "x·c", p.Output("y").Data().([]float32), []float32{0.5, 2}, 0)

	raw := G.NewTensor(s.Graph(), tensor.Float64, 1, G.WithShape(2), G.WithName("raw"))
	if s.Add(x, raw); s.Err() == nil || !strings.Contains(s.Err().Error(), "one float type") {
		t.Fatalf("float32 plus float64: %v, want a build error", s.Err())
	}
}

// cube is y = x³ (dx = 3x²·dy), an op defined as a user outside the package
// would, with backward kernels.
var cube = Op{
	Name:  "cube",
	Arity: 1,
	Shape: SameShape,
	F32:   Kernels[float32]{Forward: cubeForward[float32], Backward: cubeBackward[float32]},
	F64:   Kernels[float64]{Forward: cubeForward[float64], Backward: cubeBackward[float64]},
	Diff:  []bool{true},
	Save:  []int{0},
}

func cubeForward[T Float](y Operand[T], x []Operand[T]) error {
	for i, v := range x[0].Data {
		y.Data[i] = v * v * v
	}
	return nil
}

func cubeBackward[T Float](_ int, dx Operand[T], x []Operand[T], _, dy Operand[T]) error {
	for i, v := range x[0].Data {
		dx.Data[i] = 3 * v * v * dy.Data[i]
	}
	return nil
}

func TestUserOp(t *testing.T) {
	c := GradCheck{Seed: 2, Float32: true, Build: func(s *Scope) *G.Node {
		return s.Apply(cube, s.Param("x", tensor.Shape{3, 4}, Normal(1)))
	}}
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
}

func TestOpDefinitionErrors(t *testing.T) {
	s := NewScope(newTestParams(t, tensor.Float32))
	x := s.Param("x", tensor.Shape{2}, Ones)
	ids := s.Input("ids", tensor.Int, 2)
	noF32 := cube
	noF32.F32 = Kernels[float32]{}
	noBackward := cube
	noBackward.F64.Backward = nil
	noBackward.F32.Backward = nil
	tests := []struct {
		name, want string
		op         Op
		in         []*G.Node
	}{
		{"no name", "needs a name", Op{Arity: 1, Shape: SameShape}, []*G.Node{x}},
		{"arity", "2 inputs, want 1", cube, []*G.Node{x, x}},
		{"no float32 kernel", "no float32 forward kernel", noF32, []*G.Node{x}},
		{"no gradient", "without Grad or a float32 backward kernel", noBackward, []*G.Node{x}},
		{"only ints", "no float input", cube, []*G.Node{ids}},
		{"shape rule", "bad shape", Op{Name: "bad", Arity: 1, Shape: func([]tensor.Shape) (tensor.Shape, error) {
			return nil, errorString("bad shape")
		}, F32: cube.F32}, []*G.Node{x}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tc.op.Apply(tc.in...); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}

type errorString string

func (e errorString) Error() string { return string(e) }

func TestPointwiseExtremes(t *testing.T) {
	// Sigmoid, SiLU and Exp must neither overflow nor lose NaN, in either
	// type (float32's exponentials are vexp's); GELU's tails are x and 0.
	nan := math.NaN()
	xs := []float64{-800, -40, 0, 40, 800, nan}
	want := map[string][]float64{
		"sigmoid": {0, math.Exp(-40), 0.5, 1, 1, nan},
		"silu":    {0, -40 * math.Exp(-40), 0, 40, 800, nan},
		"gelu":    {0, 0, 0, 40, 800, nan},
		"exp":     {0, math.Exp(-40), 1, math.Exp(40), math.Inf(1), nan},
	}
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		out := run(t, dt, func(s *Scope) map[string]*G.Node {
			x := s.Constant("x", FromFloat64s(dt, xs, len(xs)))
			return map[string]*G.Node{"sigmoid": s.Sigmoid(x), "silu": s.SiLU(x), "gelu": s.GELU(x), "exp": s.Exp(x)}
		})
		for name, w := range want {
			got := Float64s(out[name])
			for i := range w {
				if d := math.Abs(got[i] - w[i]); !(d <= 1e-6*math.Abs(w[i])) && !(math.IsNaN(w[i]) && math.IsNaN(got[i])) && got[i] != w[i] {
					t.Errorf("%v %s(%g) = %g, want %g", dt, name, xs[i], got[i], w[i])
				}
			}
		}
	}
}
