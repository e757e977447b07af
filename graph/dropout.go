package graph

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"

	"github.com/pkg/errors"
	"github.com/transformer-go/transformer/graph/internal/vrow"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Dropout zeroes each element of x with probability p and scales the survivors by
// 1/(1-p) (inverted dropout, Srivastava et al., 2014), so the expected value of
// every element is unchanged and evaluation needs no rescaling:
//
//	y = x ⊙ keep / (1 - p),   keep ~ Bernoulli(1 - p)
//
// A fresh mask is drawn from rng at every run of the program, by a node of its
// own whose output (one bit per element) the backward pass reads too:
// dx = dy ⊙ keep / (1 - p). id must differ between the dropout sites of one
// graph (the Scope numbers them), or Gorgonia would merge two sites on the
// same input.
func Dropout(x *G.Node, p float64, rng *rand.Rand, id int) (*G.Node, error) {
	if p < 0 || p >= 1 {
		return nil, errors.Errorf("dropout: probability %g not in [0, 1)", p)
	}
	if rng == nil {
		return nil, errors.New("dropout: no random number generator")
	}
	mask, err := dropoutMask(x, p, rng, id)
	if err != nil {
		return nil, err
	}
	return applyMask(x, mask, p)
}

// dropoutMask draws the mask of one dropout site for x: bit i&63 of word i>>6
// is 1 where element i is kept. x orders the draw and gives the size.
//
// Each run takes one number from rng, the seed of that run's mask; block b
// of maskBlock words comes from a PCG generator seeded with (seed, b), so
// that several goroutines draw the blocks and the mask is the same however
// many there are.
func dropoutMask(x *G.Node, p float64, rng *rand.Rand, id int) (*G.Node, error) {
	words := (x.Shape().TotalSize() + 63) / 64
	threshold := uint64(p * (1 << 32))
	// The CPU's kernels and the device's take the seed alike, so that runs
	// on either consume rng the same.
	seed := rng.Uint64
	draw := func(n int, mask []int) { drawMask(seed(), threshold, n, mask) }
	return Op{
		Name:      fmt.Sprintf("dropout_mask(p=%g,id=%d)", p, id),
		Arity:     1,
		Shape:     func([]tensor.Shape) (tensor.Shape, error) { return tensor.Shape{words}, nil },
		IntOutput: true,
		F32: Kernels[float32]{Forward: func(m Operand[float32], in []Operand[float32]) error {
			draw(len(in[0].Data), m.Ints)
			return nil
		}},
		F64: Kernels[float64]{Forward: func(m Operand[float64], in []Operand[float64]) error {
			draw(len(in[0].Data), m.Ints)
			return nil
		}},
		Device: maskDevice(seed, threshold),
	}.Apply(x)
}

// drawMask draws the mask of n elements from seed, as dropoutMask says:
// one 64-bit draw gives two 32-bit uniforms u, each kept when u ≥ threshold
// = p·2³². The device's dropout_mask kernel draws the same bits.
func drawMask(seed, threshold uint64, n int, mask []int) {
	blocks := (len(mask) + maskBlock - 1) / maskBlock
	forElems(blocks, 64*maskBlock, func(lo, hi int) {
		for b := lo; b < hi; b++ {
			words := mask[b*maskBlock : min((b+1)*maskBlock, len(mask))]
			drawBlock(seed, uint64(b), threshold, words, n-64*b*maskBlock)
		}
	})
}

// drawBlock draws the words of one block, whose generator is rand.PCG
// seeded with (hi, lo), for its first n elements (all when n ≥ 64 words).
// The generator's state stays in registers (pcg), which made a mask a
// third faster than rand.PCG, whose state is written back at every draw.
func drawBlock(hi, lo, threshold uint64, words []int, n int) {
	for w := range words {
		var word uint64
		count := min(64, n-64*w)
		for j := 0; j < count; j += 2 {
			var u uint64
			hi, lo, u = pcg(hi, lo)
			// The borrow of u - threshold is 1 exactly when u is not kept.
			word |= (1^(u&(1<<32-1)-threshold)>>63)<<j | (1^(u>>32-threshold)>>63)<<(j+1)
		}
		if count < 64 {
			word &= 1<<count - 1
		}
		words[w] = int(word)
	}
}

// pcg is rand.PCG's Uint64 on the state (hi, lo): the next state and the
// draw (a 128-bit LCG step, then the DXSM output function). TestPCG holds
// it to rand.PCG.
func pcg(hi, lo uint64) (nextHi, nextLo, draw uint64) {
	const (
		mulHi    = 2549297995355413924
		mulLo    = 4865540595714422341
		incHi    = 6364136223846793005
		incLo    = 1442695040888963407
		cheapMul = 0xda942042e4dd58b5
	)
	nextHi, nextLo = bits.Mul64(lo, mulLo)
	nextHi += hi*mulLo + lo*mulHi
	nextLo, c := bits.Add64(nextLo, incLo, 0)
	nextHi, _ = bits.Add64(nextHi, incHi, c)
	draw = nextHi ^ nextHi>>32
	draw *= cheapMul
	draw ^= draw >> 48
	return nextHi, nextLo, draw * (nextLo | 1)
}

// dropoutF32 is applyMask's device kernel.
var dropoutF32 = deviceKernels.Kernel("dropout_f32")

// maskBlock is the number of words of a dropout mask drawn from one
// generator.
const maskBlock = 64

// applyMask is x ⊙ keep / (1 - p); it is its own gradient (of dy, same mask).
func applyMask(x, mask *G.Node, p float64) (*G.Node, error) {
	return Op{
		Name:  fmt.Sprintf("dropout(p=%g)", p),
		Arity: 2,
		Shape: firstShape,
		F32:   Kernels[float32]{Forward: maskKernel(p, vrow.ScaleMasked)},
		F64:   Kernels[float64]{Forward: maskKernel(p, scaleMasked64)},
		Device: DeviceKernels{Forward: func(d *DeviceCall, y DeviceOperand, in []DeviceOperand) error {
			return d.Launch(dropoutF32.Elems(y.Len()).Ptr(y.Ptr).Ptr(in[0].Ptr).Ptr(in[1].Ptr).F32(float32(1 / (1 - p))).Int(y.Len()))
		}},
		Diff: []bool{true, false},
		Grad: func(in G.Nodes, _, dy *G.Node) (G.Nodes, error) {
			dx, err := applyMask(dy, in[1], p)
			return G.Nodes{dx, nil}, err
		},
	}.Apply(x, mask)
}

// maskKernel is applyMask's kernel, scaleMasked of its type.
func maskKernel[T Float](p float64, scaleMasked func(y, x []T, mask []int, s T)) func(Operand[T], []Operand[T]) error {
	s := T(1 / (1 - p))
	return func(y Operand[T], in []Operand[T]) error {
		// Ranges start at a multiple of 64 elements, a word of the mask.
		forSpans(len(y.Data), func(lo, hi int) {
			scaleMasked(y.Data[lo:hi], in[0].Data[lo:hi], in[1].Ints[lo/64:], s)
		})
		return nil
	}
}

// scaleMasked64 is vrow.ScaleMasked in float64: y = x·s where the mask's
// bit is set, else 0, by the product's bits and'ed with the bit widened to
// a word, with no branch to mispredict on random bits.
func scaleMasked64(y, x []float64, mask []int, s float64) {
	for i, v := range x {
		keep := -uint64(mask[i>>6] >> (i & 63) & 1)
		y[i] = math.Float64frombits(math.Float64bits(v*s) & keep)
	}
}
