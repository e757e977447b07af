package trainer

import (
	"fmt"
	"slices"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/data"
	"github.com/transformer-go/transformer/model"
	"github.com/transformer-go/transformer/model/decode"
)

// Each model kind is evaluated its own way. Every kind gets the
// validation loss, perplexity and token accuracy (Evaluate). Held-out
// examples (Data.HeldOut) are checked for exact match by greedy decoding
// with a model that generates (an encoder-decoder decodes the source, a
// decoder-only model continues the prompt "source EOS"), and by the most
// probable token at every position with an encoder-only model. BLEU
// (Data.BLEU) needs a model that generates.

// checkKind refuses data that the model cannot be trained or evaluated
// on, going by what it does (model.Layout, decode.Generates), not by its
// type.
func checkKind(m model.Model, d Data) error {
	generates := decode.Generates(m)
	switch {
	case d.BLEU != nil && !generates:
		return notGenerating(m, "a BLEU sample needs a model that generates (encoder-decoder or decoder-only)")
	case len(d.HeldOut) > 0 && !generates && !m.Layout().Aligned:
		return notGenerating(m, "held-out exact match needs a model that generates or an encoder-only model")
	}
	return checkLayout(m, d)
}

// notGenerating is the error of data that need m, which does not generate,
// to generate, with the reason decode.New gives.
func notGenerating(m model.Model, need string) error {
	_, err := decode.New(nil, m, nil)
	return errors.Wrapf(err, "%s, have a model of kind %s (%T)", need, m.Config().Kind, m)
}

// checkLayout refuses batches longer than m's max_len, and batches laid
// out for another kind of model than m
// (model.Layout): joined batches (data.BatchConfig.Join, no sources) are
// for a model that reads no sources, and a model that reads none is
// refused batches with sources, which would train it on the targets alone
// while its sources are ignored; a model that reads sources needs them,
// and one aligned with its targets every source as long as its target
// (checkAligned).
func checkLayout(m model.Model, d Data) error {
	shapes := d.Train.Shapes()
	for _, b := range d.Valid {
		shapes = append(shapes, b.Shape())
	}
	l, maxLen := m.Layout(), m.Config().MaxLen
	for _, sh := range shapes {
		var err error
		switch {
		case sh.SrcLen > maxLen || sh.TgtLen > maxLen:
			err = errors.Errorf("the model's max_len is %d", maxLen)
		case l.Aligned && sh.SrcLen != sh.TgtLen:
			err = errors.New("an encoder-only model needs sources as long as targets: batches without Join (data.BatchConfig.Join is for a decoder-only model)")
		case l.Sources && sh.SrcLen == 0:
			err = errors.New("an encoder-decoder reads sources: joined batches (data.BatchConfig.Join) are for a decoder-only model")
		case !l.Sources && sh.SrcLen > 0:
			err = errors.New("a decoder-only model reads no sources, and would learn the targets of batches with sources alone: join each source to its target (data.BatchConfig.Join), as the prompt \"source EOS\" it continues")
		}
		if err != nil {
			return errors.Wrapf(err, "batches of %d rows, sources of length %d and targets of length %d", sh.Rows, sh.SrcLen, sh.TgtLen)
		}
	}
	if l.Aligned {
		return checkAligned(d)
	}
	return nil
}

// checkAligned refuses, for a model whose targets align with its sources
// (an encoder-only tagger), any example whose source and target differ in
// length: padded to one batch length, they would train without a word.
// It names the first such example of the training data, the validation
// batches or the held-out examples.
func checkAligned(d Data) error {
	for i, e := range d.Train.Examples() {
		if len(e.Src) != len(e.Tgt) {
			return unaligned(fmt.Sprintf("training example %d", i+1), len(e.Src), len(e.Tgt))
		}
	}
	for j, b := range d.Valid {
		for r := range b.Examples {
			src, tgt := tokens(b.Src[r*b.SrcLen:(r+1)*b.SrcLen]), tokens(b.TgtOut[r*b.TgtLen:(r+1)*b.TgtLen])
			if src != tgt {
				return unaligned(fmt.Sprintf("validation batch %d, row %d (example %d)", j+1, r+1, b.Index[r]+1), src-1, tgt-1)
			}
		}
	}
	for i, e := range d.HeldOut {
		if len(e.Src) != len(e.Tgt) {
			return unaligned(fmt.Sprintf("held-out example %d", i+1), len(e.Src), len(e.Tgt))
		}
	}
	return nil
}

// unaligned is the error of an example whose source and target differ in
// length, for an encoder-only model.
func unaligned(what string, src, tgt int) error {
	return errors.Errorf("%s: a source of %d tokens and a target of %d: an encoder-only model predicts a target token at every source position, so each source needs as many tokens as its target", what, src, tgt)
}

// tokens counts the ids of a batch row that are not padding.
func tokens(row []int) int {
	n := 0
	for _, id := range row {
		if id != data.PadID {
			n++
		}
	}
	return n
}

// ExactMatch is the fraction of held-out examples whose output equals the
// target: the greedy decode of a model that generates, or an encoder-only
// model's most probable token at every position.
func (t *Trainer) ExactMatch() (float64, error) {
	ex := t.data.HeldOut
	var right []bool
	var err error
	if decode.Generates(t.m) {
		right, err = t.greedyMatches(ex)
	} else {
		right, err = t.alignedMatches(ex)
	}
	if err != nil {
		return 0, errors.Wrap(err, "exact match")
	}
	n := 0
	for _, r := range right {
		if r {
			n++
		}
	}
	return float64(n) / float64(max(len(ex), 1)), nil
}

// greedyMatches reports, for each example, whether the greedy decode of
// its source (source then EOSID) is its target.
func (t *Trainer) greedyMatches(ex []data.Example) ([]bool, error) {
	srcs := make([][]int, len(ex))
	longest := 0
	for i, e := range ex {
		srcs[i] = append(slices.Clone(e.Src), data.EOSID)
		longest = max(longest, len(e.Tgt))
	}
	outs, err := t.decode(srcs, decode.Search{Method: decode.MethodGreedy, MaxLen: longest + 2, Batch: decodeBatch})
	if err != nil {
		return nil, err
	}
	right := make([]bool, len(ex))
	for i, e := range ex {
		right[i] = slices.Equal(outs[i][0].Tokens, e.Tgt)
	}
	return right, nil
}

// alignedMatches reports, for each example, whether the most probable token
// at every target position (and EOSID after the last) is the target's:
// how an encoder-only model, which predicts every position at once, is
// exactly right.
func (t *Trainer) alignedMatches(ex []data.Example) ([]bool, error) {
	right := make([]bool, 0, len(ex))
	for start := 0; start < len(ex); start += decodeBatch {
		sc, err := model.ScoreBatch(t.rt, t.eval, t.m, t.params, alignedBatch(ex[start:min(start+decodeBatch, len(ex))]))
		if err != nil {
			return nil, err
		}
		right = append(right, sc.Exact...)
	}
	return right, nil
}

// alignedBatch pads examples into one batch whose sources and targets
// have the same length: source EOSID, BOSID target, target EOSID.
func alignedBatch(ex []data.Example) model.Batch {
	src, in, out := make([][]int, len(ex)), make([][]int, len(ex)), make([][]int, len(ex))
	for i, e := range ex {
		src[i] = append(slices.Clone(e.Src), data.EOSID)
		in[i] = append([]int{data.BOSID}, e.Tgt...)
		out[i] = append(slices.Clone(e.Tgt), data.EOSID)
	}
	return model.NewBatch(src, in, out, true)
}
