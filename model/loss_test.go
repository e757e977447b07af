package model_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/model"
)

// TestEvalProgramHasALoss: an evaluation program's Loss is the training
// program's loss on the same batch (no dropout), and a program without a
// loss, or one not run, says so instead of giving a number.
func TestEvalProgramHasALoss(t *testing.T) {
	cfg, err := model.Preset("tiny", 20)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Dropout = 0
	m, params, err := model.Init(cfg, tensor.Float64, 1)
	if err != nil {
		t.Fatal(err)
	}
	sh := model.Shape{Batch: 2, SrcLen: 3, TgtLen: 3}
	b := model.NewBatch([][]int{{5, 6, 2}, {7, 2}}, [][]int{{1, 8, 9}, {1, 10}}, [][]int{{8, 9, 2}, {10, 2}}, false)
	train, err := model.CompileTrain(nil, m, params, sh, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	eval, err := model.CompileEval(nil, m, params, sh)
	if err != nil {
		t.Fatal(err)
	}
	score, err := model.CompileScore(nil, m, params, sh)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eval.Loss(); err == nil || !strings.Contains(err.Error(), "not run") {
		t.Errorf("the loss of a program not run: %v, want an error saying so", err)
	}
	var losses []float64
	for _, p := range []*graph.Program{train, eval, score} {
		if err := m.Feed(p, b); err != nil {
			t.Fatal(err)
		}
		if err := p.Run(); err != nil {
			t.Fatal(err)
		}
		l, err := p.Loss()
		if p == score {
			if err == nil || !strings.Contains(err.Error(), "has no loss") {
				t.Errorf("the loss of a scoring program: %v, %v; want an error saying it has none", l, err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		losses = append(losses, l)
	}
	if !(losses[0] > 0) || math.Abs(losses[0]-losses[1]) > 1e-12*losses[0] {
		t.Errorf("loss %v of the training program, %v of the evaluation program: want the same", losses[0], losses[1])
	}
}
