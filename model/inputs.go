package model

import (
	"fmt"
	"slices"

	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/layers/ops"
)

// Model is what the trainer needs of a model: build a graph for a batch shape
// and feed it batches. Transformer, of every kind, is a Model.
type Model interface {
	Config() Config
	// Build adds the model with its inputs to s and returns the training loss
	// and the log-probabilities [batch, lenT, vocab] of the targets (nil in a
	// training graph, which does not need them). Ending with Output gives the
	// model what each kind of graph needs, a scoring graph's TargetScores too.
	Build(s *graph.Scope, sh Shape) (loss, logp *G.Node)
	// Feed sets the inputs of a program built by Build.
	Feed(p *graph.Program, b Batch) error
	// Layout says which parts of a batch the model reads.
	Layout() Layout
}

// Layout is how a model reads a batch, which the trainer, scoring and
// decoding go by instead of the model's type.
type Layout struct {
	// Sources: the model reads Batch.Src (it has an encoder). A model
	// without sources reads Batch.TgtIn alone and generates by continuing
	// prompts (Generator.Prefix).
	Sources bool
	// Aligned: the model predicts Batch.TgtOut[b, j] at source position j
	// and reads no Batch.TgtIn, so its batches have SrcLen = TgtLen (a
	// tagger). It predicts with Tag.
	Aligned bool
}

// Shape is the shape of a batch: rows, and padded source and target lengths.
type Shape struct{ Batch, SrcLen, TgtLen int }

// String is the shape as "BxSxT", usable as a program key.
func (sh Shape) String() string { return fmt.Sprintf("%dx%dx%d", sh.Batch, sh.SrcLen, sh.TgtLen) }

// Batch is a batch of token ids, row-major and padded with PadID.
type Batch struct {
	Shape
	Src    []int // [Batch·SrcLen]
	TgtIn  []int // [Batch·TgtLen], BOS y1 … yn
	TgtOut []int // [Batch·TgtLen], y1 … yn EOS
}

// inputs are the graph inputs of a batch.
type inputs struct {
	src, srcMask, tgtIn, tgtMask, tgtOut *G.Node
}

// The names of the graph inputs a model's Build adds and Feed sets (see
// the package doc for each kind's): token ids only, the masks made from
// them in the graph (ops.PaddingMask, ops.CausalMask).
const (
	InputSrc    = "src"     // int [batch, lenS]: Batch.Src
	InputTgtIn  = "tgt_in"  // int [batch, lenT]: Batch.TgtIn
	InputTgtOut = "tgt_out" // int [batch, lenT]: Batch.TgtOut, the targets
)

// checkShape reports a batch shape a model of kind with layout l cannot be
// built for: no rows, target positions or (if it reads sources) source
// positions, or aligned lengths that differ.
func checkShape(sh Shape, kind string, l Layout) error {
	if sh.Batch < 1 || sh.TgtLen < 1 || l.Sources && sh.SrcLen < 1 {
		what := "rows and target positions"
		if l.Sources {
			what = "rows, source positions and target positions"
		}
		return errors.Errorf("a model of kind %s needs %s, have a batch of shape %v (rows x source length x target length)", kind, what, sh)
	}
	if l.Aligned && sh.SrcLen != sh.TgtLen {
		return errors.Errorf("%s model: source length %d and target length %d differ", kind, sh.SrcLen, sh.TgtLen)
	}
	return nil
}

// newInputs adds the inputs of a batch of shape sh: the sources (and their
// padding mask) if src, the decoder's inputs (and their causal mask) if
// tgt, and always the targets.
func newInputs(s *graph.Scope, sh Shape, src, tgt bool) inputs {
	var in inputs
	if src {
		in.src = s.Input(InputSrc, tensor.Int, sh.Batch, sh.SrcLen)
		in.srcMask = ops.PaddingMask(s, in.src, PadID)
	}
	if tgt {
		in.tgtIn = s.Input(InputTgtIn, tensor.Int, sh.Batch, sh.TgtLen)
		in.tgtMask = ops.CausalMask(s, in.tgtIn, PadID)
	}
	in.tgtOut = s.Input(InputTgtOut, tensor.Int, sh.Batch, sh.TgtLen)
	return in
}

// Feed sets whichever of the inputs InputSrc … InputTgtOut the program p
// has from b: the Feed of every kind, and of a model of one's own that
// names its inputs alike.
func Feed(p *graph.Program, b Batch) error {
	src, tgt := p.HasInput(InputSrc), p.HasInput(InputTgtIn)
	if n := b.Batch * b.TgtLen; len(b.TgtOut) != n || (tgt && len(b.TgtIn) != n) || (src && len(b.Src) != b.Batch*b.SrcLen) {
		return errors.Errorf("batch of shape %v has %d source, %d target-in and %d target-out ids",
			b.Shape, len(b.Src), len(b.TgtIn), len(b.TgtOut))
	}
	values := map[string]any{InputTgtOut: b.TgtOut}
	if tgt {
		values[InputTgtIn] = b.TgtIn
	}
	if src {
		values[InputSrc] = b.Src
	}
	for name, v := range values {
		if err := p.Set(name, v); err != nil {
			return err
		}
	}
	return nil
}

// NewBatch pads rows into a batch of len(src) rows: row i of Src, TgtIn
// and TgtOut is src[i], tgtIn[i] and tgtOut[i] (a nil tgtIn: PadID
// throughout), then PadID. SrcLen and TgtLen are the longest source and
// target rows, or with aligned (Layout.Aligned) both the longer of them.
func NewBatch(src, tgtIn, tgtOut [][]int, aligned bool) Batch {
	sh := Shape{Batch: len(src)}
	for i := range src {
		sh.SrcLen = max(sh.SrcLen, len(src[i]))
		sh.TgtLen = max(sh.TgtLen, len(tgtOut[i]))
		if tgtIn != nil {
			sh.TgtLen = max(sh.TgtLen, len(tgtIn[i]))
		}
	}
	if aligned {
		sh.SrcLen = max(sh.SrcLen, sh.TgtLen)
		sh.TgtLen = sh.SrcLen
	}
	b := Batch{Shape: sh, Src: make([]int, sh.Batch*sh.SrcLen), TgtIn: make([]int, sh.Batch*sh.TgtLen), TgtOut: make([]int, sh.Batch*sh.TgtLen)}
	for i := range src {
		copy(b.Src[i*sh.SrcLen:], src[i])
		if tgtIn != nil {
			copy(b.TgtIn[i*sh.TgtLen:], tgtIn[i])
		}
		copy(b.TgtOut[i*sh.TgtLen:], tgtOut[i])
	}
	return b
}

// Ended is src as an encoder reads it, ending with EOSID: src itself if it
// is empty or already ends so, otherwise a copy with EOSID added.
func Ended(src []int) []int {
	if len(src) == 0 || src[len(src)-1] == EOSID {
		return src
	}
	return append(slices.Clip(src), EOSID)
}
