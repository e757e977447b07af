package inference

import (
	"slices"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/data"
	"github.com/transformer-go/transformer/model"
	"github.com/transformer-go/transformer/model/decode"
)

// Translate translates sentences with an encoder-decoder, or with a
// decoder-only model trained on pairs (continuing "source EOS"), and
// returns the best hypothesis of each, detokenized. A sentence without
// tokens is an error naming it (counting from 1), as an empty source is
// to decode.Decoder.Decode.
func (r *Run) Translate(sentences []string, s decode.Search) ([]string, error) {
	return r.generate(sentences, s, true)
}

// Continue continues prompts with a decoder-only model and returns each
// continuation, detokenized.
func (r *Run) Continue(prompts []string, s decode.Search) ([]string, error) {
	if r.Model.Layout().Sources {
		return nil, errors.Errorf("continuing prompts needs a decoder-only model, have one of kind %s", r.Model.Config().Kind)
	}
	return r.generate(prompts, s, false)
}

// generate decodes the lines as sources (ended with EOSID) or prompts.
func (r *Run) generate(lines []string, s decode.Search, sources bool) ([]string, error) {
	if r.Tokenizer == nil {
		return nil, errors.New("this run has no tokenizer (a synthetic task): decode ids with decode.New(r.Runtime, r.Model, r.Params)")
	}
	if !decode.Generates(r.Model) {
		return nil, errors.Errorf("translating needs a model that generates, have one of kind %s", r.Model.Config().Kind)
	}
	d, err := decode.New(r.Runtime, r.Model, r.Params)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	srcs := make([][]int, len(lines))
	for i, l := range lines {
		srcs[i] = r.Tokenizer.Encode(l)
		if sources {
			if len(srcs[i]) == 0 {
				return nil, errors.Errorf("sentence %d is empty: it has no tokens to translate", i+1)
			}
			srcs[i] = append(srcs[i], data.EOSID)
		}
	}
	hyps, err := d.Decode(srcs, s)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(hyps))
	for i, h := range hyps {
		out[i] = r.Tokenizer.Decode(h[0].Tokens)
	}
	return out, nil
}

// Tag maps each sentence through a tagger (a model whose targets align
// with its sources, such as an encoder-only model): the most probable
// token at every position of "sentence EOS", up to the first EOS,
// detokenized.
func (r *Run) Tag(sentences []string) ([]string, error) {
	if !r.Model.Layout().Aligned {
		return nil, errors.Errorf("tagging needs an encoder-only model (one whose targets align with its sources), have one of kind %s", r.Model.Config().Kind)
	}
	if r.Tokenizer == nil {
		return nil, errors.New("this run has no tokenizer (a synthetic task): tag ids with model.Tag")
	}
	srcs := make([][]int, len(sentences))
	for i, sent := range sentences {
		srcs[i] = append(r.Tokenizer.Encode(sent), data.EOSID)
	}
	tags, err := model.Tag(r.Runtime, r.Model, r.Params, srcs, tagBatch)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(tags))
	for i, ids := range tags {
		if end := slices.Index(ids, data.EOSID); end >= 0 {
			ids = ids[:end]
		}
		out[i] = r.Tokenizer.Decode(ids)
	}
	return out, nil
}

// tagBatch is how many sentences Tag runs at once.
const tagBatch = 32
