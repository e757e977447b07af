package trainer

import (
	"slices"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/data"
	"github.com/transformer-go/transformer/model"
)

// Each model kind is evaluated its own way. Every kind gets the
// validation loss, perplexity and token accuracy (Evaluate). Held-out
// examples (Data.HeldOut) are checked for exact match by greedy decoding
// with a model that generates (an encoder-decoder decodes the source, a
// decoder-only model continues the prompt "source EOS"), and by the most
// probable token at every position with an encoder-only model. BLEU
// (Data.BLEU) needs a model that generates.

// checkKind refuses data that the model cannot be trained or evaluated
// on, going by what it does (model.Layout, model.Generates), not by its
// type.
func checkKind(m model.Model, d Data) error {
	generates := model.Generates(m)
	switch {
	case d.BLEU != nil && !generates:
		return notGenerating(m, "a BLEU sample needs a model that generates (encoder-decoder or decoder-only)")
	case len(d.HeldOut) > 0 && !generates && !m.Layout().Aligned:
		return notGenerating(m, "held-out exact match needs a model that generates or an encoder-only model")
	}
	return checkLayout(m, d)
}

// notGenerating is the error of data that need m, which does not generate,
// to generate, with the reason model.NewDecoder gives.
func notGenerating(m model.Model, need string) error {
	_, err := model.NewDecoder(nil, m, nil)
	return errors.Wrapf(err, "%s, have a model of kind %s (%T)", need, m.Config().Kind, m)
}

// checkLayout refuses batches longer than m's max_len, and batches laid
// out for another kind of model than m
// (model.Layout): joined batches (data.BatchConfig.Join, no sources) are
// for a model that reads no sources; a model that reads sources needs
// them, and one aligned with its targets sources as long as its targets. A
// model without sources trained on batches with sources would learn the
// targets alone, so it is refused them when held-out examples or a BLEU
// sample prompt it with sources.
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
		case !l.Sources && sh.SrcLen > 0 && (len(d.HeldOut) > 0 || d.BLEU != nil):
			err = errors.New("a decoder-only model continues the prompt \"source EOS\" when it is evaluated, which it learns from joined batches (data.BatchConfig.Join): batches with sources train it on the targets alone")
		}
		if err != nil {
			return errors.Wrapf(err, "batches of %d rows, sources of length %d and targets of length %d", sh.Rows, sh.SrcLen, sh.TgtLen)
		}
	}
	return nil
}

// ExactMatch is the fraction of held-out examples whose output equals the
// target: the greedy decode of a model that generates, or an encoder-only
// model's most probable token at every position.
func (t *Trainer) ExactMatch() (float64, error) {
	ex := t.data.HeldOut
	var right []bool
	var err error
	if model.Generates(t.m) {
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
	outs, err := t.decode(srcs, model.Search{Method: model.MethodGreedy, MaxLen: longest + 2, Batch: decodeBatch})
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
	n := 0
	for _, e := range ex {
		n = max(n, len(e.Src)+1, len(e.Tgt)+1)
	}
	b := model.Batch{Shape: model.Shape{Batch: len(ex), SrcLen: n, TgtLen: n},
		Src: make([]int, len(ex)*n), TgtIn: make([]int, len(ex)*n), TgtOut: make([]int, len(ex)*n)}
	for i, e := range ex {
		row := i * n
		copy(b.Src[row:], append(slices.Clone(e.Src), data.EOSID))
		copy(b.TgtIn[row:], append([]int{data.BOSID}, e.Tgt...))
		copy(b.TgtOut[row:], append(slices.Clone(e.Tgt), data.EOSID))
	}
	return b
}
