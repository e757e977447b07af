package model

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/layers/ops"
)

// TestScoreRows scores made-up log-probabilities: each row's sum over its
// targets, and whether each target is the most probable token.
func TestScoreRows(t *testing.T) {
	// Two rows of two positions over a vocabulary of 3; the second row's
	// second target is padding.
	lp := []float64{
		math.Log(0.1), math.Log(0.2), math.Log(0.7), // target 2: most probable
		math.Log(0.1), math.Log(0.3), math.Log(0.6), // target 1: not
		math.Log(0.2), math.Log(0.5), math.Log(0.3), // target 1: most probable
		math.Log(0.9), math.Log(0.05), math.Log(0.05), // padding
	}
	b := Batch{Shape: Shape{Batch: 2, TgtLen: 2}, TgtOut: []int{2, 1, 1, PadID}}
	sc := Score(tensor.New(tensor.WithShape(2, 2, 3), tensor.WithBacking(lp)), b)
	wantRows := []float64{math.Log(0.7) + math.Log(0.3), math.Log(0.5)}
	if sc.Tokens != 3 || sc.Correct != 2 || !slices.Equal(sc.Exact, []bool{false, true}) ||
		math.Abs(sc.Rows[0]-wantRows[0]) > 1e-12 || math.Abs(sc.Rows[1]-wantRows[1]) > 1e-12 ||
		math.Abs(sc.NLL+wantRows[0]+wantRows[1]) > 1e-12 {
		t.Fatalf("scores %+v, want rows %v, exact [false true], 3 tokens, 2 correct", sc, wantRows)
	}
}

// bigram is a model of one's own that does not end with Output: the next
// token's logits are the current token's embedding times the embeddings.
type bigram struct{ cfg Config }

func (m bigram) Config() Config { return m.cfg }

func (m bigram) Layout() Layout { return Layout{} }

func (m bigram) Feed(p *graph.Program, b Batch) error {
	if err := p.Set(InputTgtIn, b.TgtIn); err != nil {
		return err
	}
	return p.Set(InputTgtOut, b.TgtOut)
}

func (m bigram) Build(s *graph.Scope, sh Shape) (loss, logp *G.Node) {
	w := s.Param("embed", tensor.Shape{m.cfg.Vocab, m.cfg.DModel}, graph.Normal(1))
	in := s.Input(InputTgtIn, tensor.Int, sh.Batch, sh.TgtLen)
	out := s.Input(InputTgtOut, tensor.Int, sh.Batch, sh.TgtLen)
	logp = s.LogSoftmax(s.MatMul(s.Embed(w, in, 1), w, true))
	return ops.SmoothedCrossEntropy(s, logp, out, 0, PadID), logp
}

// TestScoreRunMatchesLogProbs scores testBatch with every kind's scoring
// program (CompileScore, targets scored from the logits) and with its
// evaluation program's log-probabilities: the same scores. A model of
// one's own that does not end with Output is scored from its
// log-probabilities.
func TestScoreRunMatchesLogProbs(t *testing.T) {
	cfg := smallConfig()
	enc, _ := New(cfg)
	lm, _ := NewDecoderOnly(cfg)
	tagger, _ := NewEncoderOnly(cfg)
	tagged := Batch{Shape: Shape{Batch: 1, SrcLen: 3, TgtLen: 3}, Src: []int{5, 6, 0}, TgtIn: []int{1, 5, 0}, TgtOut: []int{6, 5, 0}}
	tests := []struct {
		m      Model
		b      Batch
		scores bool // whether CompileScore's program has TargetScores
	}{{enc, testBatch, true}, {lm, testBatch, true}, {tagger, tagged, true}, {bigram{cfg}, testBatch, false}}
	for _, tc := range tests {
		params, err := NewParams(tc.m, tensor.Float64, rand.New(rand.NewPCG(1, 1)))
		if err != nil {
			t.Fatal(err)
		}
		run := func(compile func(*graph.Runtime, Model, *graph.Params, Shape) (*graph.Program, error)) (Scores, bool) {
			p, err := compile(nil, tc.m, params, tc.b.Shape)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			if err = tc.m.Feed(p, tc.b); err == nil {
				err = p.Run()
			}
			if err != nil {
				t.Fatal(err)
			}
			return ScoreRun(p, tc.b), p.Output(TargetScores) != nil
		}
		want, _ := run(CompileEval)
		got, scored := run(CompileScore)
		if scored != tc.scores {
			t.Errorf("%T: scoring program has TargetScores: %t, want %t", tc.m, scored, tc.scores)
		}
		if got.Tokens != want.Tokens || got.Correct != want.Correct || !slices.Equal(got.Exact, want.Exact) ||
			math.Abs(got.NLL-want.NLL) > 1e-9 || len(got.Rows) != len(want.Rows) {
			t.Fatalf("%T: scores %+v, from log-probabilities %+v", tc.m, got, want)
		}
		for i := range got.Rows {
			if math.Abs(got.Rows[i]-want.Rows[i]) > 1e-9 {
				t.Errorf("%T: row %d scores %g, from log-probabilities %g", tc.m, i, got.Rows[i], want.Rows[i])
			}
		}
	}
}

// TestBatchSizeRefused: scoring and tagging in batches of fewer than one
// row is an error, not an endless loop.
func TestBatchSizeRefused(t *testing.T) {
	cfg := smallConfig()
	enc, _ := New(cfg)
	tagger, _ := NewEncoderOnly(cfg)
	for _, batch := range []int{0, -1} {
		params, err := NewParams(enc, tensor.Float64, rand.New(rand.NewPCG(1, 1)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ScorePairs(nil, enc, params, [][]int{{5, EOSID}}, [][]int{{BOSID, 6, EOSID}}, batch); err == nil || !strings.Contains(err.Error(), "batch ≥ 1") {
			t.Errorf("ScorePairs with batch %d: %v, want an error naming batch ≥ 1", batch, err)
		}
		tparams, err := NewParams(tagger, tensor.Float64, rand.New(rand.NewPCG(1, 1)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Tag(nil, tagger, tparams, [][]int{{5, 6}}, batch); err == nil || !strings.Contains(err.Error(), "batch ≥ 1") {
			t.Errorf("Tag with batch %d: %v, want an error naming batch ≥ 1", batch, err)
		}
	}
}
