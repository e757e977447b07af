package decode

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/internal/hostcost"
	"github.com/transformer-go/transformer/model"
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

// benchSetup is the tiny model of the given kind with random weights and
// benchSources(n, kind).
func benchSetup(b *testing.B, n int, kind string) (model.Model, *graph.Params, [][]int) {
	cfg, err := model.Preset("tiny", benchVocab)
	if err != nil {
		b.Fatal(err)
	}
	cfg.Kind = kind
	m, params, err := model.Init(cfg, tensor.Float32, 1)
	if err != nil {
		b.Fatal(err)
	}
	return m, params, benchSources(n, kind)
}

// benchSources are n random sources of benchSrcLen tokens ending with
// EOSID (for a decoder-only model, prompts of benchSrcLen symbols: after
// EOSID its tied embedding makes a random model end at once).
func benchSources(n int, kind string) [][]int {
	rng := rand.New(rand.NewPCG(3, 4))
	srcs := make([][]int, n)
	for i := range srcs {
		for range benchSrcLen - 1 {
			srcs[i] = append(srcs[i], 4+rng.IntN(benchVocab-4))
		}
		last := model.EOSID
		if kind == model.KindDecoderOnly {
			last = 4 + rng.IntN(benchVocab-4)
		}
		srcs[i] = append(srcs[i], last)
	}
	return srcs
}

// benchmarkDecode times d.Decode of n sources with s, after a first run that
// compiles the programs.
func benchmarkDecode(b *testing.B, n int, kind string, s Search) {
	benchmarkDecodeIn(b, graph.Float32, n, kind, s)
}

// benchmarkDecodeIn is benchmarkDecode with products of precision prec.
func benchmarkDecodeIn(b *testing.B, prec graph.Precision, n int, kind string, s Search) {
	m, params, srcs := benchSetup(b, n, kind)
	rt, err := graph.NewRuntime(graph.DeviceCPU, prec)
	if err != nil {
		b.Fatal(err)
	}
	d, err := New(rt, m, params)
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
			benchmarkDecode(b, n, model.KindEncoderDecoder, Search{Method: MethodGreedy})
		})
	}
}

// BenchmarkGreedyBF16 is BenchmarkGreedy with bfloat16 products
// (graph.BF16).
func BenchmarkGreedyBF16(b *testing.B) {
	for _, n := range []int{1, 32} {
		b.Run(fmt.Sprintf("batch=%d", n), func(b *testing.B) {
			benchmarkDecodeIn(b, graph.BF16, n, model.KindEncoderDecoder, Search{Method: MethodGreedy})
		})
	}
}

func BenchmarkBeam4(b *testing.B) {
	for _, n := range []int{1, 32} {
		b.Run(fmt.Sprintf("batch=%d", n), func(b *testing.B) {
			s := DefaultSearch()
			benchmarkDecode(b, n, model.KindEncoderDecoder, s)
		})
	}
}

// BenchmarkGreedyDecoderOnly continues prompts of 16 tokens with a
// decoder-only model of the tiny preset's sizes.
func BenchmarkGreedyDecoderOnly(b *testing.B) {
	for _, n := range []int{1, 32} {
		b.Run(fmt.Sprintf("batch=%d", n), func(b *testing.B) {
			benchmarkDecode(b, n, model.KindDecoderOnly, Search{Method: MethodGreedy})
		})
	}
}

// BenchmarkUncachedGreedy is greedy decoding that re-runs the whole decoder
// on the prefix at every step, to compare with BenchmarkGreedy.
func BenchmarkUncachedGreedy(b *testing.B) { benchmarkUncached(b, model.KindEncoderDecoder) }

// BenchmarkUncachedGreedyDecoderOnly is BenchmarkUncachedGreedy for the
// decoder-only model of BenchmarkGreedyDecoderOnly.
func BenchmarkUncachedGreedyDecoderOnly(b *testing.B) { benchmarkUncached(b, model.KindDecoderOnly) }

// benchmarkUncached times uncachedGreedy on a model of the given kind.
func benchmarkUncached(b *testing.B, kind string) {
	for _, n := range []int{1, 32} {
		b.Run(fmt.Sprintf("batch=%d", n), func(b *testing.B) {
			m, params, srcs := benchSetup(b, n, kind)
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

// BenchmarkDeviceHostStep decodes greedily with base (vocabulary 8,000, 64
// sources of 16 tokens, 32 steps) on graph/cuda's recording device, which
// makes every check a GPU's calls make and executes nothing, and reports
// per decoding step the host's CPU time and the calls a GPU would be
// given (hostcost.Report's metrics), op by op and replayed.
func BenchmarkDeviceHostStep(b *testing.B) {
	for _, mode := range []string{"op-by-op", "replay"} {
		b.Run(fmt.Sprintf("step=greedy/mode=%s/batch=64", mode), func(b *testing.B) {
			cfg, err := model.Preset("base", benchVocab)
			if err != nil {
				b.Fatal(err)
			}
			m, params, err := model.Init(cfg, tensor.Float32, 1)
			if err != nil {
				b.Fatal(err)
			}
			hostDecodeSteps(b, mode, m, params, benchSources(64, model.KindEncoderDecoder))
		})
	}
}

// hostDecodeSteps decodes srcs greedily on a recording device in mode,
// once untimed, then b.N times, and reports per step.
func hostDecodeSteps(b *testing.B, mode string, m model.Model, params *graph.Params, srcs [][]int) {
	rt, rec := hostcost.Runtime(b, mode)
	rec.Fill = keepGoing(m.Config().Vocab)
	d, err := New(rt, m, params)
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	s := Search{Method: MethodGreedy, Temperature: 1, Batch: len(srcs), MaxLen: benchOutLen}
	if _, err := d.Decode(srcs, s); err != nil {
		b.Fatal(err)
	}
	rec.Reset()
	cpu := hostcost.CPUTime()
	b.ResetTimer()
	for range b.N {
		if _, err := d.Decode(srcs, s); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	hostcost.Report(b, b.N*benchOutLen, hostcost.CPUTime()-cpu, rec.Counts())
}

// keepGoing writes log-probabilities of vocab words that make every row
// choose word 5 (not EOSID), so that greedy decoding runs all its steps.
func keepGoing(vocab int) func([]byte) {
	return func(dst []byte) {
		for i := range len(dst) / 4 {
			v := float32(-1)
			if i%vocab == 5 {
				v = 0
			}
			binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(v))
		}
	}
}
