package model

import (
	"fmt"
	"math"
	"slices"

	"github.com/pkg/errors"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
)

// Scores sums up how well log-probabilities predict a batch's targets.
type Scores struct {
	// NLL is the summed negative log-likelihood of the non-pad targets, Tokens
	// their number and Correct how many are the most probable token.
	NLL     float64
	Tokens  int
	Correct int
	// Rows holds each row's summed log-probability of its targets, and
	// Exact whether each of them is the most probable token.
	Rows  []float64
	Exact []bool
}

// Score scores the log-probabilities [batch, lenT, vocab] of an evaluation
// program against the batch's targets, skipping padding. It reads them where
// they lie, in their own element type.
func Score(logp *tensor.Dense, b Batch) Scores {
	switch lp := logp.Data().(type) {
	case []float32:
		return scoreLogProbs(lp, b)
	case []float64:
		return scoreLogProbs(lp, b)
	}
	return Scores{}
}

// ScoreRun scores the last run of p, a program from CompileScore or
// CompileEval, against b, the batch it ran on: from its TargetScores if it
// has them, else from its log-probabilities.
func ScoreRun(p *graph.Program, b Batch) Scores {
	ts := p.Output(TargetScores)
	if ts == nil {
		return Score(p.Output(LogProbs), b)
	}
	s := graph.Float64s(ts)
	return scoreTargets(b, func(i int) (float64, bool) { return s[2*i], s[2*i+1] == 1 })
}

// scoreLogProbs is Score on the log-probabilities' elements.
func scoreLogProbs[T float32 | float64](lp []T, b Batch) Scores {
	vocab := len(lp) / len(b.TgtOut)
	return scoreTargets(b, func(i int) (float64, bool) {
		row, t := lp[i*vocab:(i+1)*vocab], b.TgtOut[i]
		return float64(row[t]), indexOfMax(row) == t
	})
}

// scoreTargets sums up b's targets that are not padding, given for target
// i its log-probability and whether it is the most probable token.
func scoreTargets(b Batch, target func(i int) (logp float64, best bool)) Scores {
	sc := Scores{Rows: make([]float64, b.Batch), Exact: slices.Repeat([]bool{true}, b.Batch)}
	for i, t := range b.TgtOut {
		if t == PadID {
			continue
		}
		lp, best := target(i)
		sc.NLL -= lp
		sc.Rows[i/b.TgtLen] += lp
		sc.Tokens++
		if best {
			sc.Correct++
		} else {
			sc.Exact[i/b.TgtLen] = false
		}
	}
	return sc
}

// Add accumulates o into s (rows are appended).
func (s *Scores) Add(o Scores) {
	s.NLL += o.NLL
	s.Tokens += o.Tokens
	s.Correct += o.Correct
	s.Rows = append(s.Rows, o.Rows...)
	s.Exact = append(s.Exact, o.Exact...)
}

// Loss is the mean negative log-likelihood per token.
func (s Scores) Loss() float64 { return s.NLL / float64(max(s.Tokens, 1)) }

// Perplexity is exp(Loss).
func (s Scores) Perplexity() float64 { return math.Exp(s.Loss()) }

// Accuracy is the fraction of targets predicted right.
func (s Scores) Accuracy() float64 { return float64(s.Correct) / float64(max(s.Tokens, 1)) }

// indexOfMax is the index of the largest element of v, the first of equal
// ones (0 for an empty v).
func indexOfMax[T float32 | float64](v []T) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}

// ScorePairs scores each pair by teacher forcing: the sum over t ≥ 1 of
// log p(tgt[t] | tgt[<t], src), padding masked. Every target starts with the
// start token and has at least one token after it. A decoder-only model
// reads the source as its prompt (decode.Decoder.Decode), scoring the target's
// tokens after BOSID src; an aligned (encoder-only) model predicts tgt[j+1]
// at source position j. Pairs run in batches of up to batch rows, padded
// to the longest of each batch; a batch whose attention or log-probabilities
// alone would not fit in memory is an error, before anything is allocated.
func ScorePairs(rt *graph.Runtime, m Model, params *graph.Params, src, tgt [][]int, batch int) ([]float64, error) {
	if len(src) != len(tgt) {
		return nil, errors.Errorf("%d sources but %d targets", len(src), len(tgt))
	}
	if batch < 1 {
		return nil, errors.Errorf("scoring needs batch ≥ 1, have %d", batch)
	}
	progs := graph.NewPrograms()
	defer progs.Close()
	var scores []float64
	for start := 0; start < len(src); start += batch {
		end := min(start+batch, len(src))
		b, err := teacherForced(m, src[start:end], tgt[start:end], start)
		if err != nil {
			return nil, err
		}
		need := m.Config().ForwardBytes(int(params.Dtype().Size()), b.Batch, b.SrcLen, b.TgtLen)
		what := fmt.Sprintf("scoring pairs %d to %d (sources of up to %d tokens, targets of up to %d)", start+1, end, b.SrcLen, b.TgtLen)
		if err := rt.CheckMemory(what, need); err != nil {
			return nil, errors.Errorf("%v; score fewer pairs at once, or shorter ones", err)
		}
		sc, err := ScoreBatch(rt, progs, m, params, b)
		if err != nil {
			return nil, err
		}
		scores = append(scores, sc.Rows...)
	}
	return scores, nil
}

// ScoreBatch runs on b the scoring program of its shape (CompileScore),
// taken from progs or compiled into it, and scores the run (ScoreRun).
func ScoreBatch(rt *graph.Runtime, progs *graph.Programs, m Model, params *graph.Params, b Batch) (Scores, error) {
	p, err := runBatch(rt, progs, m, params, b, CompileScore)
	if err != nil {
		return Scores{}, err
	}
	return ScoreRun(p, b), nil
}

// runBatch runs b on the program of its shape that compile (CompileEval,
// CompileScore) builds, taken from progs or compiled into it the first time.
func runBatch(rt *graph.Runtime, progs *graph.Programs, m Model, params *graph.Params, b Batch,
	compile func(*graph.Runtime, Model, *graph.Params, Shape) (*graph.Program, error)) (*graph.Program, error) {
	p, err := progs.Get(b.Shape.String(), func() (*graph.Program, error) { return compile(rt, m, params, b.Shape) })
	if err == nil {
		err = m.Feed(p, b)
	}
	if err == nil {
		err = p.Run()
	}
	return p, err
}

// teacherForced pads pairs into a batch whose decoder input is tgt[:-1] and
// whose targets are tgt[1:]; first is the index of the first pair, for
// errors. A Generator's decoder input starts with its Prefix(src) instead of
// tgt[0], the prefix's positions but the last without a target (PadID).
func teacherForced(m Model, src, tgt [][]int, first int) (Batch, error) {
	ins := make([][]int, len(src))
	outs := make([][]int, len(src))
	prompts := !m.Layout().Sources // may be empty
	for i := range src {
		if (len(src[i]) == 0 && !prompts) || len(tgt[i]) < 2 {
			return Batch{}, errors.Errorf("pair %d: need a source and a target of at least 2 tokens, have %d and %d", first+i+1, len(src[i]), len(tgt[i]))
		}
		prefix := []int{tgt[i][0]}
		if g, ok := m.(Generator); ok {
			prefix = g.Prefix(src[i])
		}
		ins[i] = append(prefix, tgt[i][1:len(tgt[i])-1]...)
		outs[i] = append(make([]int, len(prefix)-1), tgt[i][1:]...) // PadID under the prefix
	}
	return NewBatch(src, ins, outs, m.Layout().Aligned), nil // aligned: targets at the source positions
}
