package trainer

import (
	"slices"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/data"
	"github.com/transformer-go/transformer/model/decode"
	"github.com/transformer-go/transformer/trainer/bleu"
)

// BLEUSample is a sample of the validation data that the trainer translates
// and scores with BLEU (Data.BLEU).
type BLEUSample struct {
	// Src are the sources' ids without EOSID (as in data.Example) and Refs
	// their reference translations as text.
	Src  [][]int
	Refs []string
	// Detokenize turns output ids into text (data.Tokenizer.Decode).
	Detokenize func(ids []int) string
	// Every is how many evaluations apart BLEU is computed (0 or 1: at each);
	// the last evaluation always computes it.
	Every int
	// KeepBest keeps best.safetensors by BLEU instead of validation loss.
	KeepBest bool
	// Search decodes the sample; its zero value is greedy decoding.
	Search decode.Search
}

// Validate reports the first thing wrong with the sample.
func (b *BLEUSample) Validate() error {
	switch {
	case len(b.Src) == 0 || len(b.Src) != len(b.Refs):
		return errors.Errorf("BLEU sample of %d sources and %d references", len(b.Src), len(b.Refs))
	case b.Detokenize == nil:
		return errors.New("BLEU sample without a detokenizer")
	case b.Every < 0:
		return errors.Errorf("BLEU every %d evaluations", b.Every)
	}
	return nil
}

// bleuDue reports whether this evaluation computes BLEU: every BLEU.Every-th
// evaluation, and the last.
func (t *Trainer) bleuDue() bool {
	if t.data.BLEU == nil {
		return false
	}
	step, every := t.adam.Step, max(t.data.BLEU.Every, 1)
	return step == t.opt.Steps || (step/t.opt.EvalEvery)%every == 0
}

// BLEU translates the BLEU sample with the current parameters and returns its
// corpus BLEU, as sacreBLEU computes it by default (13a tokenization,
// exponential smoothing).
func (t *Trainer) BLEU() (float64, error) {
	b := t.data.BLEU
	if b == nil {
		return 0, errors.New("no BLEU sample")
	}
	if err := b.Validate(); err != nil {
		return 0, err
	}
	srcs := make([][]int, len(b.Src))
	for i, s := range b.Src {
		srcs[i] = append(slices.Clone(s), data.EOSID)
	}
	s := b.Search
	if s.Method == "" {
		s = decode.Search{Method: decode.MethodGreedy, Batch: decodeBatch}
	}
	outs, err := t.decode(srcs, s)
	if err != nil {
		return 0, errors.Wrap(err, "BLEU sample")
	}
	hyps := make([]string, len(outs))
	for i, o := range outs {
		hyps[i] = b.Detokenize(o[0].Tokens)
	}
	score, err := bleu.Corpus(hyps, b.Refs, bleu.Options{})
	return score.Score, errors.Wrap(err, "BLEU sample")
}
