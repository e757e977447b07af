package graph

import (
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func newTestRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0)) }

func newTestParams(t *testing.T, dt tensor.Dtype) *Params {
	t.Helper()
	p, err := NewParams(dt, newTestRNG(1))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// total is Σ x over every element, a scalar whose gradient is dense and
// costs one pass: what a test or benchmark reduces an op's output to.
func total(s *Scope, x *G.Node) *G.Node {
	return s.Apply(Op{
		Name:  "total",
		Arity: 1,
		Shape: func([]tensor.Shape) (tensor.Shape, error) { return tensor.ScalarShape(), nil },
		F32:   totalKernels[float32](),
		F64:   totalKernels[float64](),
		Diff:  []bool{true},
	}, x)
}

func totalKernels[T Float]() Kernels[T] {
	return Kernels[T]{
		Forward: func(y Operand[T], in []Operand[T]) error {
			y.Data[0] = T(RowSum(in[0].Data))
			return nil
		},
		Backward: func(_ int, dx Operand[T], _ []Operand[T], _, dy Operand[T]) error {
			for i := range dx.Data {
				dx.Data[i] = dy.Data[0]
			}
			return nil
		},
	}
}

// nll is the negative log-likelihood of targets [rows] under logits [rows,
// vocab], summed over the rows, from general ops: each target's row of
// -log-softmax is picked by a one-hot row that Embed gathers from a
// negated identity matrix.
func nll(s *Scope, logits, targets *G.Node) *G.Node {
	vocab := logits.Shape()[1]
	eye := make([]float64, vocab*vocab)
	for i := range vocab {
		eye[i*(vocab+1)] = -1
	}
	pick := s.Embed(s.Constant("negated_identity", FromFloat64s(s.Dtype(), eye, vocab, vocab)), targets, 1)
	return total(s, s.Mul(s.LogSoftmax(logits), pick))
}

// hostOf is the CPU's target of rt, a runtime on the CPU.
func hostOf(rt *Runtime) *hostTarget { return rt.at.(*hostTarget) }

// lossOf is p's loss after its last run, failing t if it has none.
func lossOf(t testing.TB, p *Program) float64 {
	t.Helper()
	l, err := p.Loss()
	if err != nil {
		t.Fatal(err)
	}
	return l
}
