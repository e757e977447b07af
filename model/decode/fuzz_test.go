package decode

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/transformer-go/transformer/internal/modeltest"
	"github.com/transformer-go/transformer/model"
)

// TestDecodeNonFiniteWeights decodes with a NaN or infinite weight in the
// output layer: every method returns an error, never an empty result.
func TestDecodeNonFiniteWeights(t *testing.T) {
	cfg := modeltest.Configs()["post-norm, sinusoidal"]
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		m, params := modeltest.Model(t, cfg, 1, 1)
		params.Value("decoder.layers.1.norm3.weight").Data().([]float64)[0] = bad
		d, _ := New(nil, m, params)
		for _, method := range []string{MethodGreedy, MethodBeam, MethodSample} {
			s := DefaultSearch()
			s.Method, s.Rand = method, rand.New(rand.NewPCG(1, 1))
			hyps, err := d.Decode(modeltest.Sources(cfg.Vocab, 3, 1), s)
			if err == nil || !strings.Contains(err.Error(), "log-probabilities hold") {
				t.Errorf("weight %v, %s: %d results, error %v", bad, method, len(hyps), err)
			}
		}
		d.Close()
	}
}

// FuzzDecode decodes random sources with random weights, some of them
// large or not finite, by every method: the result is an error, or one
// hypothesis at least per source with finite scores and valid tokens.
func FuzzDecode(f *testing.F) {
	cfg := modeltest.Configs()["pre-norm, rms, learned positions"]
	m, params := modeltest.Model(f, cfg, 1, 1)
	d, err := New(nil, m, params)
	if err != nil {
		f.Fatal(err)
	}
	names := params.Names()
	f.Add(uint64(1), 1.0, uint16(0), 0.0, uint8(0), uint8(2), uint8(0))
	f.Add(uint64(2), 30.0, uint16(7), math.NaN(), uint8(1), uint8(4), uint8(3))
	f.Add(uint64(3), 1e30, uint16(100), math.Inf(1), uint8(2), uint8(1), uint8(20))
	f.Fuzz(func(t *testing.T, seed uint64, scale float64, at uint16, bad float64, method, n, maxLen uint8) {
		rng := rand.New(rand.NewPCG(seed, 3))
		for _, name := range names {
			for i := range params.Value(name).Data().([]float64) {
				params.Value(name).Data().([]float64)[i] = scale * (rng.Float64() - 0.5)
			}
		}
		w := params.Value(names[int(at)%len(names)]).Data().([]float64)
		w[int(at)%len(w)] = bad
		params.Updated()
		s := DefaultSearch()
		s.Method = []string{MethodGreedy, MethodBeam, MethodSample}[method%3]
		s.Rand, s.MaxLen = rand.New(rand.NewPCG(seed, 4)), int(maxLen%16)
		srcs := modeltest.Sources(cfg.Vocab, 1+int(n%5), seed)
		out, err := d.Decode(srcs, s)
		if err != nil {
			return
		}
		checkHypotheses(t, out, cfg.Vocab, func(int, Hypothesis) bool { return true })
	})
}

// FuzzDecodePrompts continues arbitrary prompts (any ids, any length, none
// at all) with a decoder-only model by every method: the result is an
// error, or one hypothesis at least per prompt with finite scores, valid
// tokens and prompt and output within the model's max_len.
func FuzzDecodePrompts(f *testing.F) {
	cfg := modeltest.Configs()["decoder-only, pre-norm, rms, learned positions"]
	m, params := modeltest.Model(f, cfg, 1, 1)
	d, err := New(nil, m, params)
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte{5, 6, 7}, uint8(0), uint8(0))
	f.Add([]byte{}, uint8(1), uint8(3))
	f.Add([]byte{2, 2, 39, 40, 255}, uint8(2), uint8(19))
	f.Add(make([]byte, 19), uint8(1), uint8(0))
	f.Fuzz(func(t *testing.T, raw []byte, method, maxLen uint8) {
		prompts := [][]int{nil}
		for _, b := range raw {
			if b == 0 {
				prompts = append(prompts, nil) // a zero byte starts the next prompt
				continue
			}
			last := len(prompts) - 1
			prompts[last] = append(prompts[last], int(b)-1)
		}
		s := DefaultSearch()
		s.Method = []string{MethodGreedy, MethodBeam, MethodSample}[method%3]
		s.Rand, s.MaxLen = rand.New(rand.NewPCG(uint64(len(raw)), 4)), int(maxLen%24)
		out, err := d.Decode(prompts, s)
		if err != nil {
			return
		}
		// <s>, the prompt and the output but its last token fit the positions.
		checkHypotheses(t, out, cfg.Vocab, func(i int, h Hypothesis) bool { return 1+len(prompts[i])+len(h.Tokens)-1 <= cfg.MaxLen })
	})
}

// checkHypotheses fails t unless every source has a hypothesis at least,
// each with a finite score, tokens that are not reserved and below vocab,
// and fits(source, hypothesis).
func checkHypotheses(t *testing.T, out [][]Hypothesis, vocab int, fits func(int, Hypothesis) bool) {
	t.Helper()
	for i, hyps := range out {
		if len(hyps) == 0 {
			t.Fatalf("source %d: no hypothesis and no error", i)
		}
		for _, h := range hyps {
			if math.IsNaN(h.Score) || math.IsInf(h.Score, 0) || !fits(i, h) {
				t.Fatalf("source %d: %+v", i, h)
			}
			for _, tok := range h.Tokens {
				if tok <= model.BOSID || tok >= vocab {
					t.Fatalf("source %d: token %d", i, tok)
				}
			}
		}
	}
}
