package main

import (
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/cmd/internal/srcflags"
	"github.com/transformer-go/transformer/data"
	"github.com/transformer-go/transformer/model"
	"github.com/transformer-go/transformer/model/decode"
)

// translate decodes srcs, the sentences (or prompts) of in, with d and
// writes their translations (or the prompts and their continuations).
func (t *translator) translate(d *decode.Decoder, srcs [][]int, in lines, s decode.Search, prompts bool, w io.Writer) ([]pair, error) {
	hyps, err := d.Decode(srcs, s)
	if err != nil {
		return nil, errors.Wrapf(err, "translating %s", in.name)
	}
	pairs := make([]pair, len(srcs))
	for i, h := range hyps {
		prompt := ""
		if prompts { // the prompt, then where its continuation starts
			prompt = t.tok.decode(srcs[i]) + "\t"
		}
		t.writeHypotheses(w, in.first+i+1, prompt, h, s.NBest > 1)
		pairs[i] = pair{src: srcs[i], tgt: h[0].Tokens}
	}
	return pairs, nil
}

// score writes the teacher-forced log-probability of each of the next
// lines of targets as the translation of the same line of in, whose ids
// are srcs.
func (t *translator) score(srcs [][]int, in lines, targets *data.LineReader, batch int, b srcflags.Bound, w io.Writer) ([]pair, error) {
	tl, err := readChunk(targets, in.first, len(in.text))
	if err != nil {
		return nil, errors.Wrap(err, "-score")
	}
	if len(tl.text) != len(in.text) {
		return nil, errors.Errorf("%s has %d lines but %s has more", tl.name, in.first+len(tl.text), in.name)
	}
	tgts, pairs := make([][]int, len(srcs)), make([]pair, len(srcs))
	for i := range tgts {
		if tgts[i], err = t.encode(tl, i, targetText, b); err != nil {
			return nil, err
		}
		pairs[i] = pair{src: srcs[i], tgt: tgts[i][1 : len(tgts[i])-1]}
	}
	scores, err := model.ScorePairs(t.rt, t.m, t.params, srcs, tgts, batch)
	if err != nil {
		return nil, errors.Wrapf(err, "scoring lines %d to %d of %s", in.first+1, in.first+len(in.text), tl.name)
	}
	for i, s := range scores {
		if math.IsNaN(s) || math.IsInf(s, 0) {
			return nil, errors.Errorf("%s:%d: the score is %v, not a number a model with finite log-probabilities gives (are its weights too large?)", tl.name, in.first+i+1, s)
		}
		fmt.Fprintf(w, "%.6f\n", s)
	}
	return pairs, nil
}

// tags reports whether the model tags the sources rather than generating.
func (t *translator) tags() bool { return !decode.Generates(t.m) && t.m.Layout().Aligned }

// tag writes, for each source, the most probable token at each of its
// positions (model.Tag) up to the first EOS: what a tagger predicts.
func (t *translator) tag(srcs [][]int, in lines, batch int, w io.Writer) ([]pair, error) {
	tags, err := model.Tag(t.rt, t.m, t.params, srcs, batch)
	if err != nil {
		return nil, errors.Wrapf(err, "tagging %s", in.name)
	}
	pairs := make([]pair, len(srcs))
	for i, tg := range tags {
		if end := slices.Index(tg, model.EOSID); end >= 0 {
			tg = tg[:end]
		}
		fmt.Fprintln(w, t.tok.decode(tg))
		pairs[i] = pair{src: srcs[i], tgt: tg}
	}
	return pairs, nil
}
