package model

import (
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"
)

// benchBatch is a full batch of random ids: batch 32, lengths 32.
func benchBatch(vocab int) Batch {
	rng := rand.New(rand.NewPCG(1, 1))
	sh := Shape{Batch: 32, SrcLen: 32, TgtLen: 32}
	b := Batch{Shape: sh, Src: make([]int, 32*32), TgtIn: make([]int, 32*32), TgtOut: make([]int, 32*32)}
	for i := range b.Src {
		b.Src[i], b.TgtIn[i], b.TgtOut[i] = 4+rng.IntN(vocab-4), 4+rng.IntN(vocab-4), 4+rng.IntN(vocab-4)
	}
	return b
}

func benchmarkStep(b *testing.B, preset string, vocab int, train bool) {
	cfg, _ := Preset(preset, vocab)
	m, _ := New(cfg)
	params, _ := NewParams(m, tensor.Float32, rand.New(rand.NewPCG(1, 2)))
	batch := benchBatch(vocab)
	prog, err := CompileTrain(m, params, batch.Shape, rand.New(rand.NewPCG(3, 4)))
	if !train {
		prog, err = CompileEval(m, params, batch.Shape)
	}
	if err != nil {
		b.Fatal(err)
	}
	if err := m.Feed(prog, tensor.Float32, batch); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := prog.Run(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(batch.TgtOut))/b.Elapsed().Seconds(), "tgt-tokens/s")
}

func BenchmarkTrainStepTiny1k(b *testing.B) { benchmarkStep(b, "tiny", 1000, true) }
