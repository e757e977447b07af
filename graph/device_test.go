package graph_test

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	. "github.com/transformer-go/transformer/graph"
)

// deviceCase builds an op's output y from a scope whose parameter store is
// the same on either runtime; set fills the inputs.
type deviceCase struct {
	name  string
	build func(s *Scope) *G.Node
	set   func(p *Program) error
}

// deviceCases are graph's general ops on small shapes that are not
// multiples of a block.
func deviceCases() []deviceCase {
	x := func(s *Scope, shape ...int) *G.Node { return s.Param("x", shape, Normal(1)) }
	pos := func(s *Scope, shape ...int) *G.Node { return s.Param("x", shape, uniformPositive) }
	p := func(s *Scope, name string, shape ...int) *G.Node { return s.Param(name, shape, Normal(1)) }
	setIDs := func(p *Program) error { return p.Set("ids", []int{3, 1, 4, 1, 5, 0}) }
	return []deviceCase{
		{"relu", func(s *Scope) *G.Node { return s.ReLU(x(s, 3, 7)) }, nil},
		{"exp", func(s *Scope) *G.Node { return s.Exp(x(s, 3, 7)) }, nil},
		{"log", func(s *Scope) *G.Node { return s.Log(pos(s, 3, 7)) }, nil},
		{"sqrt", func(s *Scope) *G.Node { return s.Sqrt(pos(s, 3, 7)) }, nil},
		{"tanh", func(s *Scope) *G.Node { return s.Tanh(x(s, 3, 7)) }, nil},
		{"sigmoid", func(s *Scope) *G.Node { return s.Sigmoid(x(s, 3, 7)) }, nil},
		{"silu", func(s *Scope) *G.Node { return s.SiLU(x(s, 3, 7)) }, nil},
		{"gelu", func(s *Scope) *G.Node { return s.GELU(x(s, 3, 7)) }, nil},
		{"add, broadcast", func(s *Scope) *G.Node { return s.Add(x(s, 2, 3, 4), p(s, "b", 3, 1)) }, nil},
		{"sub, broadcast", func(s *Scope) *G.Node { return s.Sub(p(s, "a", 4), x(s, 2, 3, 4)) }, nil},
		{"mul, broadcast", func(s *Scope) *G.Node { return s.Mul(x(s, 2, 3, 4), p(s, "b", 2, 1, 4)) }, nil},
		{"div, broadcast", func(s *Scope) *G.Node { return s.Div(x(s, 2, 3, 4), s.Exp(p(s, "b", 3, 4))) }, nil},
		{"softmax", func(s *Scope) *G.Node { return s.Softmax(x(s, 3, 5), nil, 1) }, nil},
		{"softmax scaled and masked", func(s *Scope) *G.Node {
			return s.Softmax(x(s, 2, 3, 2, 4), s.Constant("mask", KeyMask()), 0.5)
		}, nil},
		{"log-softmax", func(s *Scope) *G.Node { return s.LogSoftmax(x(s, 2, 3, 7)) }, nil},
		{"layer norm", func(s *Scope) *G.Node { return s.LayerNorm(x(s, 3, 5), p(s, "g", 5), p(s, "b", 5), 1e-5) }, nil},
		{"rms norm", func(s *Scope) *G.Node { return s.Normalize(x(s, 4, 6), p(s, "g", 6), 1e-6, false) }, nil},
		{"add and layer norm", func(s *Scope) *G.Node {
			return s.AddLayerNorm(x(s, 3, 5), p(s, "r", 3, 5), p(s, "g", 5), p(s, "b", 5), 1e-5)
		}, nil},
		{"add and rms norm", func(s *Scope) *G.Node { return s.AddNormalize(x(s, 4, 6), p(s, "r", 4, 6), p(s, "g", 6), 1e-6, false) }, nil},
		{"matmul", func(s *Scope) *G.Node { return s.MatMul(x(s, 2, 3, 4), p(s, "w", 4, 5), false) }, nil},
		{"matmul transposed", func(s *Scope) *G.Node { return s.MatMul(x(s, 2, 3, 4), p(s, "w", 5, 4), true) }, nil},
		{"affine", func(s *Scope) *G.Node { return s.Affine(x(s, 2, 3, 4), p(s, "w", 4, 5), p(s, "b", 5), false) }, nil},
		{"affine relu transposed", func(s *Scope) *G.Node {
			return s.AffineReLU(x(s, 6, 4), p(s, "w", 5, 4), p(s, "b", 5), true)
		}, nil},
		{"sum", func(s *Scope) *G.Node { return s.Sum(x(s, 2, 3, 4), 1, false) }, nil},
		{"mean, kept", func(s *Scope) *G.Node { return s.Mean(x(s, 2, 3, 4), -1, true) }, nil},
		{"max", func(s *Scope) *G.Node { return s.Max(x(s, 2, 3, 4), 0, false) }, nil},
		{"reshape and transpose", func(s *Scope) *G.Node { return s.Transpose(s.Reshape(x(s, 2, 12), 2, 3, 4), 2, 0, 1) }, nil},
		{"slice and concat", func(s *Scope) *G.Node {
			return s.Concat(1, s.Slice(x(s, 2, 5, 3), 1, 1, 4), p(s, "y", 2, 2, 3))
		}, nil},
		{"batched matmul 4-D, b transposed", func(s *Scope) *G.Node {
			return s.BatchedMatMul(x(s, 2, 3, 4, 5), p(s, "k", 2, 3, 6, 5), false, true)
		}, nil},
		{"batched matmul 3-D, both transposed", func(s *Scope) *G.Node {
			return s.BatchedMatMul(x(s, 2, 5, 4), p(s, "v", 2, 3, 5), true, true)
		}, nil},
		{"batched matmul, broadcast", func(s *Scope) *G.Node {
			return s.BatchedMatMul(x(s, 2, 1, 4, 5), p(s, "v", 3, 5, 2), false, false)
		}, nil},
		{"x read three times", func(s *Scope) *G.Node {
			x := x(s, 3, 4)
			return s.Add(s.Mul(x, x), s.Tanh(x))
		}, nil},
		{"embed", func(s *Scope) *G.Node { return s.Embed(p(s, "w", 6, 4), s.Input("ids", tensor.Int, 2, 3), 2) }, setIDs},
	}
}

// uniformPositive draws from U(0.5, 2): the inputs of Log and Sqrt.
func uniformPositive(rng *rand.Rand, _ tensor.Shape, vals []float64) {
	for i := range vals {
		vals[i] = 0.5 + 1.5*rng.Float64()
	}
}

// testRuntime is a device runtime under test and its tolerance, relative.
type testRuntime struct {
	*Runtime
	name string
	tol  float64
}

// deviceRuntimes are the simulated device (1e-5) when g++ is there (under
// CI=true it must be) and, where a GPU is usable, the CUDA device (1e-4;
// run.sh turns TF32 off); it skips when neither is.
func deviceRuntimes(t *testing.T) []testRuntime {
	t.Helper()
	var rts []testRuntime
	if _, err := exec.LookPath("g++"); err == nil || os.Getenv("CI") == "true" {
		rts = append(rts, testRuntime{simRuntime(t, Float32), "sim", 1e-5})
	}
	if rt, err := NewRuntime(DeviceCUDA, Float32); err == nil {
		t.Cleanup(func() { _ = rt.Close() })
		rts = append(rts, testRuntime{rt, "gpu", 1e-4})
	}
	if len(rts) == 0 {
		t.Skip("neither g++ (the simulated device) nor a usable GPU")
	}
	return rts
}

// TestDeviceForward runs each op's forward program on each device runtime
// and on the CPU: the outputs agree (1e-5 relative on the simulated device).
func TestDeviceForward(t *testing.T) {
	for _, dev := range deviceRuntimes(t) {
		for _, tc := range deviceCases() {
			t.Run(dev.name+"/"+tc.name, func(t *testing.T) {
				c := DeviceCheck{Device: dev.Runtime, Build: tc.build, Set: tc.set, Seed: 7, Tol: dev.tol}
				if err := c.Run(); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// TestDeviceGradients runs each op in a program with a loss on each device
// runtime and on the CPU: the loss and every parameter's gradient agree.
func TestDeviceGradients(t *testing.T) {
	for _, dev := range deviceRuntimes(t) {
		for _, tc := range deviceCases() {
			t.Run(dev.name+"/"+tc.name, func(t *testing.T) {
				c := DeviceCheck{Device: dev.Runtime, Build: tc.build, Set: tc.set, Seed: 7, Loss: true, Tol: dev.tol}
				if err := c.Run(); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// TestDeviceDropout: in training, the device applies the CPU's dropout
// masks, to the output and its gradient.
func TestDeviceDropout(t *testing.T) {
	build := func(s *Scope) *G.Node { return s.Dropout(s.Param("x", tensor.Shape{3, 70}, Normal(1)), 0.3) }
	for _, dev := range deviceRuntimes(t) {
		if err := (DeviceCheck{Device: dev.Runtime, Build: build, Seed: 7, Loss: true, Train: true, Tol: dev.tol}).Run(); err != nil {
			t.Fatalf("%s: %v", dev.name, err)
		}
	}
}

// TestDeviceCompileNamesOpsWithoutKernels: a program on a device whose graph
// holds an op without device kernels is not compiled, and the error names it.
func TestDeviceCompileNamesOpsWithoutKernels(t *testing.T) {
	dev := deviceRuntimes(t)[0].Runtime
	s := NewScope(NewTestParams(t, tensor.Float32))
	y := Total(s, s.Param("x", tensor.Shape{3}, Normal(1)))
	p, err := Compile(dev, s, nil, map[string]*G.Node{"y": y})
	if err == nil {
		_ = p.Close()
		t.Fatal("compiled a program whose op total has no device kernels")
	}
	if !strings.Contains(err.Error(), "op total has no device kernels") {
		t.Fatalf("error %q does not name the op total", err)
	}
}

// TestDeviceAdamRefusesGradientsElsewhere: Adam on a device refuses
// gradients on the host, and Adam on the CPU gradients on a device, saying
// where each lies.
func TestDeviceAdamRefusesGradientsElsewhere(t *testing.T) {
	dev := simRuntime(t, Float32)
	progs := map[*Runtime]*Program{}
	for _, rt := range []*Runtime{CPU(), dev} {
		params := NewTestParams(t, tensor.Float32)
		s := NewScope(params)
		x := s.Param("x", tensor.Shape{3}, Normal(1))
		p, err := Compile(rt, s, s.Sum(s.Mul(x, x), 0, false), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		if err := p.Run(); err != nil {
			t.Fatal(err)
		}
		progs[rt] = p
	}
	params := NewTestParams(t, tensor.Float32)
	NewScope(params).Param("x", tensor.Shape{3}, Normal(1))
	step := AdamStep{Beta1: 0.9, Beta2: 0.98, Eps: 1e-9, LR: 1e-3, Scale: 1, Step: 1}
	for rt, p := range progs {
		other := dev
		if rt == dev {
			other = CPU()
		}
		if err := other.Adam(params, params, params, p, step); err == nil || !strings.Contains(err.Error(), "the gradients lie on") {
			t.Errorf("Adam on %s of gradients on %s: %v, want an error saying where the gradients lie", other, rt, err)
		}
	}
}

// TestDeviceBF16Products: with BF16 products, the device rounds the
// operands of the products large enough for bfloat16 to pay, as the CPU
// does, and sums in float32: outputs and gradients agree with the CPU's
// BF16 programs to 1e-5 relative.
func TestDeviceBF16Products(t *testing.T) {
	dev := simRuntime(t, BF16)
	x := func(s *Scope, shape ...int) *G.Node { return s.Param("x", shape, Normal(1)) }
	p := func(s *Scope, name string, shape ...int) *G.Node { return s.Param(name, shape, Normal(1)) }
	for _, tc := range []deviceCase{
		{"matmul", func(s *Scope) *G.Node { return s.MatMul(x(s, 2, 32, 64), p(s, "w", 64, 64), false) }, nil},
		{"affine relu transposed", func(s *Scope) *G.Node {
			return s.AffineReLU(x(s, 64, 64), p(s, "w", 64, 64), p(s, "b", 64), true)
		}, nil},
		{"batched matmul", func(s *Scope) *G.Node {
			return s.BatchedMatMul(x(s, 2, 64, 64), p(s, "v", 2, 64, 64), false, true)
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := (DeviceCheck{Device: dev, Build: tc.build, Seed: 7, Loss: true}).Run(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestDeviceRefusesIDsOutsideTheVocabulary: a token id outside the
// vocabulary stops a run on a device with the CPU's error, checked on the
// host before the kernel launches.
func TestDeviceRefusesIDsOutsideTheVocabulary(t *testing.T) {
	s := NewScope(NewTestParams(t, tensor.Float32))
	y := s.Embed(s.Param("w", tensor.Shape{6, 4}, Normal(1)), s.Input("ids", tensor.Int, 2, 3), 1)
	p, err := Compile(simRuntime(t, Float32), s, nil, map[string]*G.Node{"y": y})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Set("ids", []int{3, 1, 4, 1, 6, 0}); err != nil {
		t.Fatal(err)
	}
	if err := p.Run(); err == nil || !strings.Contains(err.Error(), "token id 6 at position 4 outside the vocabulary [0, 6)") {
		t.Errorf("id 6 of a vocabulary of 6 on the device: error %v", err)
	}
}
