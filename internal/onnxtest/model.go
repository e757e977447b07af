package onnxtest

import (
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/data"
	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/model"
	"github.com/transformer-go/transformer/model/decode"
)

// The files of an export (inference.ExportONNX), which this package
// cannot import: its tests import this package.
const (
	scorerFile = "scorer.onnx"
	taggerFile = "tagger.onnx"
)

// PadBatch is a batch of the pairs of srcs and tgts (ids without EOS) as
// a model of layout l reads them, padded to rows rows of srcLen source
// and tgtLen target positions, an export's shape: a source ending with
// EOS and its target (an encoder-decoder), the target alone (a
// decoder-only language model), or a source and targets at its positions
// (an encoder-only model: the target's first tokens, cut to the source's
// length).
func PadBatch(l model.Layout, srcs, tgts [][]int, rows, srcLen, tgtLen int) model.Batch {
	if l.Aligned {
		tgtLen = srcLen
	}
	b := model.Batch{Shape: model.Shape{Batch: rows, SrcLen: srcLen, TgtLen: tgtLen},
		Src: make([]int, rows*srcLen), TgtIn: make([]int, rows*tgtLen), TgtOut: make([]int, rows*tgtLen)}
	for r := range min(rows, len(srcs)) {
		src := model.Ended(srcs[r])
		copy(b.Src[r*srcLen:], src)
		tgt := append(slices.Clone(tgts[r]), model.EOSID)
		if l.Aligned {
			tgt = tgt[:min(len(tgt), len(src))]
		}
		copy(b.TgtIn[r*tgtLen:], append([]int{model.BOSID}, tgt[:len(tgt)-1]...))
		copy(b.TgtOut[r*tgtLen:], tgt)
	}
	return b
}

// CheckScorer scores b, of the export's shape, with the export's
// scorer.onnx in dir in ONNX Runtime and with the model's scoring program
// (model.CompileScore): every target's log-probability agrees within 1e-4
// relative, and whether it is the most probable token alike. It logs the
// largest relative error.
func CheckScorer(t *testing.T, m model.Model, params *graph.Params, dir string, b model.Batch) {
	t.Helper()
	p, err := model.CompileScore(nil, m, params, b.Shape)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := m.Feed(p, b); err == nil {
		err = p.Run()
	}
	if err != nil {
		t.Fatal(err)
	}
	ours := graph.Float64s(p.Output(model.TargetScores))
	in := map[string]*tensor.Dense{model.InputTgtOut: ids(b.TgtOut, b.Batch, b.TgtLen)}
	if m.Layout().Sources {
		in[model.InputSrc] = ids(b.Src, b.Batch, b.SrcLen)
	}
	if !m.Layout().Aligned {
		in[model.InputTgtIn] = ids(b.TgtIn, b.Batch, b.TgtLen)
	}
	theirs := graph.Float64s(Run(t, Job{Model: filepath.Join(dir, scorerFile), Inputs: in})[0][model.TargetScores])
	worst, targets := 0.0, 0
	for i := 0; i < len(ours); i += 2 {
		if b.TgtOut[i/2] == model.PadID {
			continue
		}
		targets++
		worst = max(worst, math.Abs(theirs[i]-ours[i])/math.Abs(ours[i]))
		if theirs[i+1] != ours[i+1] {
			t.Errorf("target %d: most probable %v in ONNX Runtime, %v here", i/2, theirs[i+1], ours[i+1])
		}
	}
	t.Logf("scorer: %d targets, largest relative error of a log-probability %.2g", targets, worst)
	if !(worst <= 1e-4) {
		t.Errorf("scorer: relative error %g, want at most 1e-4", worst)
	}
}

// ids is v as an int tensor [rows, n].
func ids(v []int, rows, n int) *tensor.Dense {
	return tensor.New(tensor.WithShape(rows, n), tensor.WithBacking(slices.Clone(v)))
}

// greedyJS is the example that decodes greedily with an export in ONNX
// Runtime.
func greedyJS() string { return filepath.Join(here(), "..", "..", "cmd", "export", "greedy.js") }

// CheckGreedy decodes the sources (prompts, for a decoder-only model)
// greedily with decode and, in ONNX Runtime, with cmd/export's greedy.js
// on the export in dir: the tokens are the same for every source. It logs
// how many tokens the outputs have.
func CheckGreedy(t *testing.T, m model.Model, params *graph.Params, dir string, srcs [][]int) {
	t.Helper()
	d, err := decode.New(nil, m, params)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	s := decode.DefaultSearch()
	s.Method, s.Batch = decode.MethodGreedy, 20
	hyps, err := d.Decode(srcs, s)
	if err != nil {
		t.Fatal(err)
	}
	var in strings.Builder
	for _, p := range srcs {
		in.WriteString(data.FormatIDs(p) + "\n")
	}
	lines := strings.Split(strings.TrimSuffix(string(Node(t, in.String(), greedyJS(), dir)), "\n"), "\n")
	if len(lines) != len(srcs) {
		t.Fatalf("greedy.js printed %d lines for %d sources", len(lines), len(srcs))
	}
	same, tokens := 0, 0
	for i, line := range lines {
		got := parseIDs(t, line)
		tokens += len(hyps[i][0].Tokens)
		if slices.Equal(got, hyps[i][0].Tokens) {
			same++
		} else if i < same+5 { // name the first few
			t.Errorf("source %d: ONNX Runtime decodes %v, decode %v", i+1, got, hyps[i][0].Tokens)
		}
	}
	t.Logf("greedy decoding: the same tokens on %d of %d sources (%d tokens)", same, len(srcs), tokens)
	if same != len(srcs) {
		t.Errorf("greedy decoding: the same tokens on %d of %d sources", same, len(srcs))
	}
}

// parseIDs reads a line of ids separated by spaces.
func parseIDs(t *testing.T, line string) []int {
	t.Helper()
	var v []int
	for _, f := range strings.Fields(line) {
		id, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("greedy.js printed %q", line)
		}
		v = append(v, id)
	}
	return v
}

// CheckTagger tags the sources with model.Tag and with the export's
// tagger.onnx in dir, of rows rows of srcLen positions, in ONNX Runtime
// (the most probable token at every position, the first of equal ones):
// the tags are the same for every source.
func CheckTagger(t *testing.T, m model.Model, params *graph.Params, dir string, srcs [][]int, rows, srcLen int) {
	t.Helper()
	ended := make([][]int, len(srcs))
	for i, s := range srcs {
		ended[i] = model.Ended(s)
	}
	tags, err := model.Tag(nil, m, params, ended, 20)
	if err != nil {
		t.Fatal(err)
	}
	var jobs []Job
	for i := 0; i < len(ended); i += rows {
		b := make([]int, rows*srcLen)
		for r, s := range ended[i:min(i+rows, len(ended))] {
			copy(b[r*srcLen:], s)
		}
		jobs = append(jobs, Job{Model: filepath.Join(dir, taggerFile), Inputs: map[string]*tensor.Dense{model.InputSrc: ids(b, rows, srcLen)}})
	}
	same := 0
	for j, res := range Run(t, jobs...) {
		lp := graph.Float64s(res[model.LogProbs])
		vocab := len(lp) / (rows * srcLen)
		for r := range min(rows, len(ended)-j*rows) {
			i := j*rows + r
			got := make([]int, len(ended[i]))
			for p := range got {
				got[p] = argmax(lp[(r*srcLen+p)*vocab : (r*srcLen+p+1)*vocab])
			}
			if slices.Equal(got, tags[i]) {
				same++
			} else {
				t.Errorf("source %d: ONNX Runtime tags %v, model.Tag %v", i+1, got, tags[i])
			}
		}
	}
	t.Logf("tagging: the same tags on %d of %d sources", same, len(ended))
}

// argmax is the index of v's largest element, the first of equal ones.
func argmax(v []float64) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}
