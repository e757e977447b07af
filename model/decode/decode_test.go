package decode

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/internal/modeltest"
	"github.com/transformer-go/transformer/layers"
	"github.com/transformer-go/transformer/model"
)

// uncachedGreedy is greedy decoding without a cache: the evaluation program
// runs on the whole prefix at every step. It is the reference that the
// cached Decoder must match. A decoder-only model's sources are prompts:
// its rows start with BOSID and the prompt.
func uncachedGreedy(m model.Model, params *graph.Params, srcs [][]int, maxLen int) ([]Hypothesis, error) {
	return uncachedEnsemble([]Member{{m, params}}, srcs, maxLen)
}

// uncachedEnsemble is uncachedGreedy with the mean of the members'
// distributions, each computed on the whole prefix, as log Σ p / M.
func uncachedEnsemble(members []Member, srcs [][]int, maxLen int) ([]Hypothesis, error) {
	m := members[0].Model
	prefixes := make([][]int, len(srcs))
	sh := model.Shape{Batch: len(srcs)}
	for i, s := range srcs {
		prefixes[i] = m.(model.Generator).Prefix(s)
		sh.SrcLen = max(sh.SrcLen, len(s), 1)
		sh.TgtLen = max(sh.TgtLen, len(prefixes[i])-1+maxLen)
	}
	n := sh.TgtLen
	b := model.Batch{Shape: sh, Src: make([]int, sh.Batch*sh.SrcLen), TgtIn: make([]int, sh.Batch*n), TgtOut: make([]int, sh.Batch*n)}
	for i, s := range srcs {
		copy(b.Src[i*sh.SrcLen:], s)
		copy(b.TgtIn[i*n:], prefixes[i])
	}
	progs := make([]*graph.Program, len(members))
	for i, mb := range members {
		p, err := model.CompileEval(nil, mb.Model, mb.Params, sh)
		if err != nil {
			return nil, err
		}
		defer p.Close()
		progs[i] = p
	}
	hyps, done := make([]Hypothesis, len(srcs)), make([]bool, len(srcs))
	for t := range maxLen {
		lp := make([]float64, 0)
		for i, mb := range members {
			if err := mb.Model.Feed(progs[i], b); err != nil {
				return nil, err
			}
			if err := progs[i].Run(); err != nil {
				return nil, err
			}
			lp = sumProbs(lp, graph.Float64s(progs[i].Output(model.LogProbs)))
		}
		for j := range lp {
			lp[j] = math.Log(lp[j] / float64(len(members)))
		}
		vocab := len(lp) / (sh.Batch * n)
		for i := range srcs {
			if done[i] {
				continue
			}
			at := len(prefixes[i]) - 1 + t
			row := outputRow(lp, i*n+at, vocab)
			tok := topK(row, 1)[0]
			hyps[i].LogProb += row[tok]
			if done[i] = tok == model.EOSID; done[i] {
				hyps[i].Ended = true
			} else {
				hyps[i].Tokens = append(hyps[i].Tokens, tok)
			}
			if at+1 < n {
				b.TgtIn[i*n+at+1] = tok
			}
		}
	}
	for i := range hyps {
		hyps[i].Score = hyps[i].LogProb
	}
	return hyps, nil
}

// sumProbs adds exp(lp) to sum element by element (sum empty: starts it).
func sumProbs(sum, lp []float64) []float64 {
	if len(sum) == 0 {
		sum = make([]float64, len(lp))
	}
	for i, l := range lp {
		sum[i] += math.Exp(l)
	}
	return sum
}

// teacherForcedScores scores each hypothesis as the output of its source
// with ScorePairs: the sum of the log-probabilities of its tokens (and
// EOSID if it ended) after the source's prefix.
func teacherForcedScores(t *testing.T, m model.Model, params *graph.Params, srcs [][]int, hyps []Hypothesis) []float64 {
	t.Helper()
	tgts := make([][]int, len(hyps))
	for i, h := range hyps {
		tgts[i] = append([]int{model.BOSID}, h.Tokens...)
		if h.Ended {
			tgts[i] = append(tgts[i], model.EOSID)
		}
	}
	scores, err := model.ScorePairs(nil, m, params, srcs, tgts, 4)
	if err != nil {
		t.Fatal(err)
	}
	return scores
}

// inFloat32 is a float32 copy of params.
func inFloat32(t *testing.T, m model.Model, params *graph.Params) *graph.Params {
	t.Helper()
	return cloneParams(t, m, params, tensor.Float32)
}

// cloneParams is a copy of params in element type dt.
func cloneParams(t *testing.T, m model.Model, params *graph.Params, dt tensor.Dtype) *graph.Params {
	t.Helper()
	clone, err := model.NewParams(m, dt, rand.New(rand.NewPCG(0, 0)))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range params.Names() {
		if err := clone.Set(name, params.Value(name)); err != nil {
			t.Fatal(err)
		}
	}
	return clone
}

// TestCachedGreedyMatchesUncached decodes greedily with the cache and by
// re-running the model on each whole prefix, and checks that both give
// the same tokens and that their log-probabilities and the teacher-forced
// one agree to tol relative to the log-probability's size: a sum of up to
// ten tokens' log-probabilities, each from a pass whose products differ in
// shape (and so, with OpenBLAS, in the order of their float32 sums).
func TestCachedGreedyMatchesUncached(t *testing.T) {
	tests := []struct {
		eos float64
		dt  tensor.Dtype
		tol float64
	}{
		{1, tensor.Float64, 1e-10},
		{6, tensor.Float64, 1e-10},
		{1, tensor.Float32, 2e-5},
	}
	for name, cfg := range modeltest.Configs() {
		for _, tc := range tests {
			m, params := modeltest.Model(t, cfg, 2, tc.eos)
			modeltest.Sharpen(params, 2)
			if tc.dt == tensor.Float32 {
				params = inFloat32(t, m, params)
			}
			srcs := modeltest.Sources(cfg.Vocab, 7, 5)
			if cfg.Kind == model.KindDecoderOnly {
				srcs = append(srcs, nil) // an empty prompt
			}
			want, err := uncachedGreedy(m, params, srcs, 10)
			if err != nil {
				t.Fatal(err)
			}
			d, err := New(nil, m, params)
			if err != nil {
				t.Fatal(err)
			}
			got, err := d.Decode(srcs, Search{Method: MethodGreedy, MaxLen: 10, Batch: 3})
			if err != nil {
				t.Fatal(err)
			}
			forced := teacherForcedScores(t, m, params, srcs, want)
			ended := 0
			for i := range srcs {
				g := got[i][0]
				if !slices.Equal(g.Tokens, want[i].Tokens) || g.Ended != want[i].Ended {
					t.Fatalf("%s, %+v, source %d: cached %v (ended %t), uncached %v (ended %t)", name, tc, i, g.Tokens, g.Ended, want[i].Tokens, want[i].Ended)
				}
				if tol := tc.tol * (1 + math.Abs(forced[i])); math.Abs(g.LogProb-want[i].LogProb) > tol || math.Abs(g.LogProb-forced[i]) > tol {
					t.Fatalf("%s, %+v, source %d: log-probability %g cached, %g uncached, %g teacher-forced", name, tc, i, g.LogProb, want[i].LogProb, forced[i])
				}
				if g.Ended {
					ended++
				}
			}
			if tc.eos > 1 && ended == 0 {
				t.Fatalf("%s: no output ended; the test does not cover EOS", name)
			}
			d.Close()
		}
	}
}

func TestStepsMatchTeacherForcing(t *testing.T) {
	for name, cfg := range modeltest.Configs() {
		m, params := modeltest.Model(t, cfg, 5, 1)
		srcs := modeltest.Sources(cfg.Vocab, 3, 8)
		const steps = 6
		// The decoder's inputs: BOS, then random tokens.
		rng := rand.New(rand.NewPCG(9, 9))
		b := model.Batch{Shape: model.Shape{Batch: 3, TgtLen: steps}, TgtIn: make([]int, 3*steps), TgtOut: make([]int, 3*steps)}
		for i := range srcs {
			b.SrcLen = max(b.SrcLen, len(srcs[i]))
			for j := range steps {
				b.TgtIn[i*steps+j], b.TgtOut[i*steps+j] = model.BOSID, 3+rng.IntN(cfg.Vocab-3)
				if j > 0 {
					b.TgtIn[i*steps+j] = b.TgtOut[i*steps+j-1]
				}
			}
		}
		b.Src = make([]int, 3*b.SrcLen)
		for i, s := range srcs {
			copy(b.Src[i*b.SrcLen:], s)
		}
		p, err := model.CompileEval(nil, m, params, b.Shape)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Feed(p, b); err != nil {
			t.Fatal(err)
		}
		if err := p.Run(); err != nil {
			t.Fatal(err)
		}
		want := graph.Float64s(p.Output(model.LogProbs)) // [3, steps, vocab]
		d, _ := New(nil, m, params)
		ss, err := d.start(srcs, 1, d.roundLen(steps))
		if err != nil {
			t.Fatal(err)
		}
		for step := range steps {
			tokens := []int{b.TgtIn[step], b.TgtIn[steps+step], b.TgtIn[2*steps+step]}
			if err := ss.advance(tokens, nil); err != nil {
				t.Fatal(err)
			}
			lp, err := ss.logProbs(0, 3)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				row := want[(i*steps+step)*cfg.Vocab : (i*steps+step+1)*cfg.Vocab]
				for j, v := range lp[i*cfg.Vocab : (i+1)*cfg.Vocab] {
					if math.Abs(v-row[j]) > 1e-10 {
						t.Fatalf("%s: row %d, step %d, token %d: cached %g, teacher-forced %g", name, i, step, j, v, row[j])
					}
				}
			}
		}
		d.Close()
		p.Close()
	}
}

// exhaustive is the best hypothesis by Score over every output of at most
// limit tokens of the non-reserved ids, found by scoring each one.
func exhaustive(t *testing.T, m model.Model, params *graph.Params, src []int, limit int, alpha float64) Hypothesis {
	t.Helper()
	var all []Hypothesis
	var grow func(prefix []int)
	grow = func(prefix []int) {
		if len(prefix) == limit {
			all = append(all, Hypothesis{Tokens: prefix})
			return
		}
		all = append(all, Hypothesis{Tokens: prefix, Ended: true})
		for w := 3; w < m.Config().Vocab; w++ {
			if w != model.EOSID {
				grow(append(slices.Clone(prefix), w))
			}
		}
	}
	grow(nil)
	srcs := make([][]int, len(all))
	for i := range srcs {
		srcs[i] = src
	}
	var best Hypothesis
	for i, lp := range teacherForcedScores(t, m, params, srcs, all) {
		n := len(all[i].Tokens)
		if all[i].Ended {
			n++
		}
		h := all[i]
		h.LogProb, h.Score = lp, lp/lengthPenalty(n, alpha)
		if i == 0 || h.Score > best.Score {
			best = h
		}
	}
	return best
}

func TestBeamSearch(t *testing.T) {
	for _, kind := range []string{model.KindEncoderDecoder, model.KindDecoderOnly} {
		for _, eos := range []float64{1, 2} {
			testBeamSearch(t, kind, eos)
		}
	}
}

// testBeamSearch checks beam search on a model of the given kind whose EOS
// embedding is scaled by eos (2: many outputs end within the bounds, 1:
// few do).
func testBeamSearch(t *testing.T, kind string, eos float64) {
	cfg, _ := model.Preset("tiny", 7)
	cfg.Kind = kind
	cfg.DModel, cfg.DFF, cfg.EncoderLayers, cfg.DecoderLayers = 16, 32, 1, 2
	m, params := modeltest.Model(t, cfg, 11, eos)
	modeltest.Sharpen(params, 2)
	d, err := New(nil, m, params)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	srcs := modeltest.Sources(cfg.Vocab, 5, 7)
	tests := []struct {
		name         string
		beam, nbest  int
		alpha        float64
		wantGreedy   bool // the best equals greedy decoding
		wantOptimal  bool // the best equals exhaustive search
		maxLen, want int
	}{
		{"beam 1 is greedy", 1, 1, 0, true, false, 6, 1},
		{"beam 4, 3-best", 4, 3, 0.6, false, false, 6, 3},
		{"wide beam is exhaustive", 128, 2, 0.6, false, true, 3, 2},
		{"wide beam, no length penalty", 128, 1, 0, false, true, 3, 1},
	}
	greedy, err := d.Decode(srcs, Search{Method: MethodGreedy, MaxLen: 6, Batch: 8})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s, %s, eos×%g", kind, tc.name, eos), func(t *testing.T) {
			s := Search{Method: MethodBeam, Beam: tc.beam, NBest: tc.nbest, Alpha: tc.alpha, MaxLen: tc.maxLen, Batch: 2}
			got, err := d.Decode(srcs, s)
			if err != nil {
				t.Fatal(err)
			}
			for i, hyps := range got {
				if len(hyps) != tc.want {
					t.Fatalf("source %d: %d hypotheses, want %d", i, len(hyps), tc.want)
				}
				forced := teacherForcedScores(t, m, params, slices.Repeat([][]int{srcs[i]}, len(hyps)), hyps)
				for j, h := range hyps {
					if math.Abs(h.LogProb-forced[j]) > 1e-9 || (j > 0 && h.Score > hyps[j-1].Score) {
						t.Fatalf("source %d, hypothesis %d: %+v, teacher-forced %g (hypotheses %+v)", i, j, h, forced[j], hyps)
					}
				}
				if tc.wantGreedy && !slices.Equal(hyps[0].Tokens, greedy[i][0].Tokens) {
					t.Fatalf("source %d: beam %v, greedy %v", i, hyps[0].Tokens, greedy[i][0].Tokens)
				}
				if !tc.wantOptimal {
					continue
				}
				if want := exhaustive(t, m, params, srcs[i], tc.maxLen, tc.alpha); !slices.Equal(hyps[0].Tokens, want.Tokens) {
					t.Fatalf("source %d: beam %+v, exhaustive search %+v", i, hyps[0], want)
				}
			}
		})
	}
}

func TestSampling(t *testing.T) {
	for _, name := range []string{"post-norm, sinusoidal", "decoder-only, post-norm"} {
		t.Run(name, func(t *testing.T) { testSampling(t, modeltest.Configs()[name]) })
	}
}

// testSampling checks that sampling from a one-token distribution is
// greedy decoding, and that a seed decides the samples.
func testSampling(t *testing.T, cfg model.Config) {
	m, params := modeltest.Model(t, cfg, 3, 2)
	d, err := New(nil, m, params)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	srcs := modeltest.Sources(cfg.Vocab, 6, 9)
	greedy, err := d.Decode(srcs, Search{Method: MethodGreedy, MaxLen: 8, Batch: 4})
	if err != nil {
		t.Fatal(err)
	}
	sample := func(s Search, seed uint64) [][]Hypothesis {
		s.Method, s.MaxLen, s.Batch, s.Rand = MethodSample, 8, 4, rand.New(rand.NewPCG(seed, 0))
		out, err := d.Decode(srcs, s)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	tests := []struct {
		name string
		s    Search
	}{
		{"top-k 1", Search{Temperature: 1, TopK: 1}},
		{"tiny top-p", Search{Temperature: 1, TopP: 1e-9}},
		{"cold", Search{Temperature: 1e-4}},
	}
	for _, tc := range tests {
		for i, hyps := range sample(tc.s, 1) {
			if !slices.Equal(hyps[0].Tokens, greedy[i][0].Tokens) || math.Abs(hyps[0].LogProb-greedy[i][0].LogProb) > 1e-9 {
				t.Fatalf("%s, source %d: sampled %+v, greedy %+v", tc.name, i, hyps[0], greedy[i][0])
			}
		}
	}
	warm := Search{Temperature: 1.5, TopK: 20, TopP: 0.95}
	a, b := sample(warm, 7), sample(warm, 7)
	differs := false
	for i := range a {
		if !slices.Equal(a[i][0].Tokens, b[i][0].Tokens) {
			t.Fatalf("source %d: one seed sampled %v and %v", i, a[i][0].Tokens, b[i][0].Tokens)
		}
		differs = differs || !slices.Equal(a[i][0].Tokens, greedy[i][0].Tokens)
	}
	if !differs {
		t.Fatal("sampling at temperature 1.5 gave the greedy outputs")
	}
}

func TestSamplerDistribution(t *testing.T) {
	row := []float64{math.Log(0.5), math.Log(0.3), math.Log(0.2), math.Inf(-1)}
	tests := []struct {
		name string
		s    Search
		want []float64
	}{
		{"plain", Search{Temperature: 1}, []float64{0.5, 0.3, 0.2, 0}},
		{"top-k 2", Search{Temperature: 1, TopK: 2}, []float64{0.625, 0.375, 0, 0}},
		{"top-p 0.6", Search{Temperature: 1, TopP: 0.6}, []float64{0.625, 0.375, 0, 0}},
		{"top-p 0.5", Search{Temperature: 1, TopP: 0.5}, []float64{1, 0, 0, 0}},
		{"temperature 0.5", Search{Temperature: 0.5}, []float64{25. / 38, 9. / 38, 4. / 38, 0}},
	}
	const n = 200000
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.s.Rand = rand.New(rand.NewPCG(1, 2))
			sm := &sampler{s: tc.s}
			counts := make([]float64, len(row))
			for range n {
				counts[sm.pick(slices.Clone(row))]++
			}
			for i, c := range counts {
				if p := tc.want[i]; math.Abs(c/n-p) > 5*math.Sqrt(p*(1-p)/n)+1e-12 {
					t.Fatalf("token %d drawn %.4f of the time, want %.4f", i, c/n, p)
				}
			}
		})
	}
}

func TestSearchValidation(t *testing.T) {
	tests := []struct {
		change func(s *Search)
		want   string
	}{
		{func(s *Search) { s.Method = "viterbi" }, "viterbi"},
		{func(s *Search) { s.NBest = 5 }, "n-best"},
		{func(s *Search) { s.Beam = 0 }, "beam"},
		{func(s *Search) { s.Method, s.Rand = MethodSample, nil }, "random"},
		{func(s *Search) { s.Method, s.Temperature = MethodSample, 0 }, "temperature"},
		{func(s *Search) { s.Method, s.TopP = MethodSample, 1.5 }, "top-p"},
		{func(s *Search) { s.Batch = 0 }, "batch"},
	}
	for _, tc := range tests {
		s := DefaultSearch()
		s.Rand = rand.New(rand.NewPCG(1, 1))
		tc.change(&s)
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one mentioning %q", s, err, tc.want)
		}
	}
	tagger, _ := model.NewEncoderOnly(modeltest.Configs()["post-norm, sinusoidal"])
	if _, err := New(nil, tagger, nil); err == nil || !strings.Contains(err.Error(), "a model without a decoder does not generate") {
		t.Errorf("encoder-only model: %v", err)
	}
}

func TestDecodeLengthBounds(t *testing.T) {
	cfgs := modeltest.Configs()
	tests := []struct {
		name   string
		cfg    model.Config
		maxLen int
		want   func(src []int) int // the length of an output that never ends
	}{
		{"default: source + 50", cfgs["post-norm, sinusoidal"], 0, func(src []int) int { return len(src) + DefaultExtraLen }},
		{"fixed", cfgs["post-norm, sinusoidal"], 5, func([]int) int { return 5 }},
		{"learned positions cap it", cfgs["pre-norm, rms, learned positions"], 0, func([]int) int { return 12 }},
		{"decoder-only: prompt + 50", cfgs["decoder-only, post-norm"], 0, func(src []int) int { return len(src) + DefaultExtraLen }},
		{"decoder-only: max_len caps prompt and output", cfgs["decoder-only, pre-norm, rms, learned positions"], 0, func(src []int) int { return 20 - len(src) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, params := modeltest.Model(t, tc.cfg, 1, 0) // EOS embedding zero: outputs rarely end
			d, _ := New(nil, m, params)
			defer d.Close()
			srcs := modeltest.Sources(tc.cfg.Vocab, 3, 4)
			for _, method := range []string{MethodGreedy, MethodBeam} {
				s := DefaultSearch()
				s.Method, s.MaxLen = method, tc.maxLen
				got, err := d.Decode(srcs, s)
				if err != nil {
					t.Fatal(err)
				}
				for i, hyps := range got {
					if h := hyps[0]; !h.Ended && len(h.Tokens) != tc.want(srcs[i]) || len(h.Tokens) > tc.want(srcs[i]) {
						t.Fatalf("%s, source %d of %d tokens: %d tokens, ended %t", method, i, len(srcs[i]), len(h.Tokens), h.Ended)
					}
				}
			}
		})
	}
}

func TestDecodeRefusesBadSources(t *testing.T) {
	cfgs := modeltest.Configs()
	tests := []struct {
		name string
		cfg  model.Config
		srcs [][]int
		want string
	}{
		{"id beyond the vocabulary", cfgs["post-norm, sinusoidal"], [][]int{{5, 40, model.EOSID}}, "source 1, position 2: id 40 is outside the vocabulary of 40"},
		{"negative id", cfgs["decoder-only, post-norm"], [][]int{{5}, {-1}}, "source 2, position 1: id -1"},
		{"bad id in a source decoded first", cfgs["post-norm, sinusoidal"], [][]int{{5, 6, 7, model.EOSID}, {40, model.EOSID}}, "source 2, position 1: id 40"},
		{"empty source decoded first", cfgs["post-norm, sinusoidal"], [][]int{{5, model.EOSID}, {}}, "source 2 is empty"},
		{"prompt fills max_len", cfgs["decoder-only, pre-norm, rms, learned positions"], [][]int{slices.Repeat([]int{5}, 20)}, "a prompt of 20 tokens leaves no room for output under the model's max_len 20"},
		{"empty source", cfgs["post-norm, sinusoidal"], [][]int{{}}, "source 1 is empty"},
	}
	for _, tc := range tests {
		m, params := modeltest.Model(t, tc.cfg, 1, 1)
		d, err := New(nil, m, params)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.Decode(tc.srcs, DefaultSearch()); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.want)
		}
		d.Close()
	}
}

// trainOnlyAttention is an attention of one's own that trains but cannot
// decode incrementally: it is not a layers.IncrementalAttention.
type trainOnlyAttention struct{ mha layers.MultiHeadAttention }

func (a trainOnlyAttention) Apply(s *graph.Scope, query, keyValue, mask *G.Node, _ *layers.Cache) *G.Node {
	return a.mha.Apply(s, query, keyValue, mask, nil)
}

// TestNewNeedsIncrementalAttention checks that a model whose attention
// has no cached step is refused when the decoder is made, with the
// reason, and that Generates says so beforehand (a trainer asks it before
// it decodes held-out examples).
func TestNewNeedsIncrementalAttention(t *testing.T) {
	reg := layers.NewRegistry()
	err := reg.Attention.Register("train-only", func(z layers.Sizes) layers.Attention {
		return trainOnlyAttention{layers.NewMultiHeadAttention(z.DModel, z.Heads, z.AttnDropout)}
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{model.KindEncoderDecoder, model.KindDecoderOnly} {
		cfg := modeltest.Configs()["post-norm, sinusoidal"]
		cfg.Kind, cfg.Attention = kind, "train-only"
		m, err := model.FromConfig(cfg, reg)
		if err != nil {
			t.Fatal(err)
		}
		params, err := model.NewParams(m, tensor.Float32, rand.New(rand.NewPCG(1, 1)))
		if err != nil {
			t.Fatal(err)
		}
		want := "attention decode.trainOnlyAttention cannot decode incrementally"
		if _, err := New(nil, m, params); err == nil || !strings.Contains(err.Error(), want) ||
			!strings.HasPrefix(err.Error(), "incremental decoding with a model of kind "+kind+": ") {
			t.Errorf("%s: New: %v, want an error saying %q", kind, err, want)
		}
		if Generates(m) {
			t.Errorf("%s: Generates is true for a model that cannot decode", kind)
		}
		cfg.Attention = "multi-head"
		if m, _ := model.FromConfig(cfg, reg); !Generates(m) {
			t.Errorf("%s: Generates is false with multi-head attention", kind)
		}
	}
}

// TestDecodeSeesUpdatedWeights checks that a Decoder's steps, which reuse
// weights packed for the matrix products, see an update of the weights made
// in place and announced between calls, as an optimizer makes it: decoding
// again gives what a new Decoder of a copy of the weights gives, not what
// the old weights gave. The batch has rows enough for the products to pack.
func TestDecodeSeesUpdatedWeights(t *testing.T) {
	cfg := modeltest.Configs()["post-norm, sinusoidal"]
	srcs := modeltest.Sources(cfg.Vocab, 9, 6)
	s := Search{Method: MethodBeam, Beam: 2, NBest: 1, MaxLen: 8, Batch: 9}
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		m, params := modeltest.Model(t, cfg, 4, 1)
		if dt == tensor.Float32 {
			params = inFloat32(t, m, params)
		}
		decode := func(d *Decoder) [][]Hypothesis {
			t.Helper()
			hyps, err := d.Decode(srcs, s)
			if err != nil {
				t.Fatal(err)
			}
			return hyps
		}
		d, err := New(nil, m, params)
		if err != nil {
			t.Fatal(err)
		}
		before := decode(d)
		scaleInPlace(params, 3)
		after := decode(d)
		fresh, err := New(nil, m, cloneParams(t, m, params, dt))
		if err != nil {
			t.Fatal(err)
		}
		want := decode(fresh)
		changed := false
		for i := range srcs {
			if after[i][0].LogProb != want[i][0].LogProb || !slices.Equal(after[i][0].Tokens, want[i][0].Tokens) {
				t.Fatalf("%v, source %d after the update: %v (log-probability %g), a new decoder gives %v (%g)",
					dt, i, after[i][0].Tokens, after[i][0].LogProb, want[i][0].Tokens, want[i][0].LogProb)
			}
			changed = changed || before[i][0].LogProb != after[i][0].LogProb
		}
		if !changed {
			t.Fatalf("%v: the update changed no log-probability; the test checks nothing", dt)
		}
		d.Close()
		fresh.Close()
	}
}

// scaleInPlace multiplies every parameter's elements by f, writing into
// their tensors and announcing it (graph.Params.Updated) as an optimizer
// does.
func scaleInPlace(params *graph.Params, f float64) {
	for _, name := range params.Names() {
		switch v := params.Value(name).Data().(type) {
		case []float64:
			for i := range v {
				v[i] *= f
			}
		case []float32:
			for i := range v {
				v[i] *= float32(f)
			}
		}
	}
	params.Updated()
}

// TestLogProbsInto checks the conversion and check of a step's
// log-probabilities: -Inf is a token of probability 0, but NaN, +Inf or a
// row of -Inf alone are refused, wherever they stand in a row.
func TestLogProbsInto(t *testing.T) {
	inf := float32(math.Inf(1))
	nan := float32(math.NaN())
	tests := []struct {
		row  []float32
		fail bool
	}{
		{[]float32{-1, -2, -3, -4, -5}, false},
		{[]float32{-1, -2, -3, -4, -inf}, false},
		{[]float32{-inf, -inf, -inf, -inf, -0.5, -inf}, false},
		{[]float32{-1, -2, nan, -4, -5}, true},
		{[]float32{-1, -2, -3, -4, -5, -6, inf}, true},
		{[]float32{-inf, -inf, -inf, -inf, -inf}, true},
	}
	for _, tc := range tests {
		// The row second of two, after a row of zeros.
		src := append(make([]float32, len(tc.row)), tc.row...)
		got, err := logProbsInto(nil, src, 2, 1)
		if (err != nil) != tc.fail {
			t.Errorf("%v: error %v, want one: %t", tc.row, err, tc.fail)
		}
		for i, v := range src {
			if g := got[i]; g != float64(v) && !(math.IsNaN(g) && v != v) {
				t.Errorf("%v: element %d is %g, want %g", tc.row, i, g, v)
			}
		}
	}
}
