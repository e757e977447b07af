package model

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
)

// The decoding benchmarks translate random sources of 16 tokens with the tiny
// preset (vocabulary 8,000, float32, random weights) into outputs of up to 32
// tokens, and report output tokens per second (for beam search, the best
// hypothesis's tokens).

const (
	benchVocab  = 8000
	benchSrcLen = 16
	benchOutLen = 32
)

// benchSetup is the tiny model with random weights and n random sources.
func benchSetup(b *testing.B, n int) (*Transformer, *graph.Params, [][]int) {
	cfg, err := Preset("tiny", benchVocab)
	if err != nil {
		b.Fatal(err)
	}
	m, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	params, err := NewParams(m, tensor.Float32, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	srcs := make([][]int, n)
	for i := range srcs {
		for range benchSrcLen - 1 {
			srcs[i] = append(srcs[i], 4+rng.IntN(benchVocab-4))
		}
		srcs[i] = append(srcs[i], EOSID)
	}
	return m, params, srcs
}

// benchmarkDecode times d.Decode of n sources with s, after a first run that
// compiles the programs.
func benchmarkDecode(b *testing.B, n int, s Search) {
	m, params, srcs := benchSetup(b, n)
	d, err := NewDecoder(m, params)
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	s.MaxLen, s.Batch = benchOutLen, n
	if _, err := d.Decode(srcs, s); err != nil {
		b.Fatal(err)
	}
	tokens := 0
	b.ResetTimer()
	for range b.N {
		hyps, err := d.Decode(srcs, s)
		if err != nil {
			b.Fatal(err)
		}
		tokens += OutputTokens(hyps)
	}
	b.ReportMetric(float64(tokens)/b.Elapsed().Seconds(), "tokens/s")
}

func BenchmarkGreedy(b *testing.B) {
	for _, n := range []int{1, 32} {
		b.Run(fmt.Sprintf("batch=%d", n), func(b *testing.B) {
			benchmarkDecode(b, n, Search{Method: MethodGreedy})
		})
	}
}

func BenchmarkBeam4(b *testing.B) {
	for _, n := range []int{1, 32} {
		b.Run(fmt.Sprintf("batch=%d", n), func(b *testing.B) {
			s := DefaultSearch()
			benchmarkDecode(b, n, s)
		})
	}
}

// BenchmarkUncachedGreedy is greedy decoding that re-runs the whole decoder
// on the prefix at every step, to compare with BenchmarkGreedy.
func BenchmarkUncachedGreedy(b *testing.B) {
	for _, n := range []int{1, 32} {
		b.Run(fmt.Sprintf("batch=%d", n), func(b *testing.B) {
			m, params, srcs := benchSetup(b, n)
			tokens := 0
			for range b.N {
				hyps, err := uncachedGreedy(m, params, srcs, benchOutLen)
				if err != nil {
					b.Fatal(err)
				}
				for _, h := range hyps {
					tokens += len(h.Tokens)
				}
			}
			b.ReportMetric(float64(tokens)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}
