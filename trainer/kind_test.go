package trainer

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/data"
	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/layers"
	"github.com/transformer-go/transformer/model"
)

// kindFixture is a small model of the given kind on a synthetic task, with
// joined batches for a decoder-only model.
func kindFixture(t *testing.T, kind, taskName string) fixture {
	t.Helper()
	task, err := data.NewTask(taskName, data.TaskConfig{Symbols: 6, MinLen: 3, MaxLen: 5})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	train := make([]data.Example, 400)
	for i := range train {
		train[i] = task.Sample(rng)
	}
	b, err := data.NewBatcher(train, data.BatchConfig{MaxTokens: 192, Seed: 3, Join: kind == model.KindDecoderOnly})
	if err != nil {
		t.Fatal(err)
	}
	held := task.HeldOut(32)
	valid, err := b.EvalBatches(held)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := model.Preset("tiny", task.VocabSize())
	cfg.Kind, cfg.Dropout, cfg.Positions, cfg.MaxLen = kind, 0, "learned", 16
	cfg.DModel, cfg.Heads, cfg.DFF, cfg.EncoderLayers, cfg.DecoderLayers = 32, 4, 64, 2, 2
	m, err := model.FromConfig(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	params, err := model.NewParams(m, tensor.Float32, rand.New(rand.NewPCG(5, 5)))
	if err != nil {
		t.Fatal(err)
	}
	return fixture{m: m, params: params, data: Data{Train: b, Valid: valid, HeldOut: held}}
}

// TestEveryKindLearns trains a decoder-only model to copy and an
// encoder-only model to reverse (copying would be too easy: with tied
// embeddings a random encoder-only model copies much of the time): each is
// evaluated its own way (the greedy continuation of "source EOS", the most
// probable token at every position) and gets most held-out sequences
// right.
func TestEveryKindLearns(t *testing.T) {
	if testing.Short() {
		t.Skip("trains two models for a few seconds each")
	}
	for _, tc := range []struct{ kind, task string }{{model.KindDecoderOnly, "copy"}, {model.KindEncoderOnly, "reverse"}} {
		t.Run(tc.kind, func(t *testing.T) {
			f := kindFixture(t, tc.kind, tc.task)
			opt := options(t.TempDir(), 2000)
			opt.EvalEvery, opt.SaveEvery, opt.Warmup, opt.LRFactor, opt.Accumulate = 2000, 2000, new(100), new(1.0), 1
			tr, err := New(f.m, f.params, f.data, opt, nil)
			if err != nil {
				t.Fatal(err)
			}
			before, err := tr.ExactMatch()
			if err != nil {
				t.Fatal(err)
			}
			if err := tr.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			sc, err := tr.Evaluate()
			if err != nil {
				t.Fatal(err)
			}
			after, err := tr.ExactMatch()
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("exact match %.3f → %.3f, validation perplexity %.3f", before, after, sc.Perplexity())
			if before > 0.2 || after < 0.8 || sc.Perplexity() > 1.5 {
				t.Fatalf("exact match %.3f → %.3f, validation perplexity %.3f: not learning", before, after, sc.Perplexity())
			}
		})
	}
}

// ownModel is a model of one's own, wrapping another: it builds and feeds
// but does not generate.
type ownModel struct{ model.Model }

// trainOnlyAttention is an attention of one's own without a cached step:
// a model with it trains but does not generate.
type trainOnlyAttention struct{ mha layers.MultiHeadAttention }

func (a trainOnlyAttention) Apply(s *graph.Scope, query, keyValue, mask *G.Node, _ *layers.Cache) *G.Node {
	return a.mha.Apply(s, query, keyValue, mask, nil)
}

func TestNewChecksTheKind(t *testing.T) {
	enc := kindFixture(t, model.KindEncoderOnly, "copy")
	lm := kindFixture(t, model.KindDecoderOnly, "copy")
	seq2seq := kindFixture(t, model.KindEncoderDecoder, "copy")
	sample := &BLEUSample{Src: [][]int{{5}}, Refs: []string{"a"}, Detokenize: func([]int) string { return "a" }}
	reg := layers.NewRegistry()
	err := reg.Attention.Register("train-only", func(z layers.Sizes) layers.Attention {
		return trainOnlyAttention{layers.NewMultiHeadAttention(z.DModel, z.Heads, z.AttnDropout)}
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg := lm.m.Config()
	cfg.Attention, cfg.Options = "train-only", nil // the options are multi-head's
	trainOnly, err := model.FromConfig(cfg, reg)
	if err != nil {
		t.Fatal(err)
	}
	shortCfg := seq2seq.m.Config()
	shortCfg.MaxLen = 5
	short, err := model.FromConfig(shortCfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		m    model.Model
		d    Data
		want string
	}{
		{"BLEU of an encoder-only model", enc.m, Data{Train: enc.data.Train, Valid: enc.data.Valid, BLEU: sample}, "a BLEU sample needs a model that generates (encoder-decoder or decoder-only), have a model of kind encoder-only"},
		{"held out with a model of one's own", ownModel{lm.m}, lm.data, "held-out exact match needs a model that generates or an encoder-only model, have a model of kind decoder-only (trainer.ownModel)"},
		{"held out with an attention without a cached step", trainOnly, lm.data, "have a model of kind decoder-only (*model.Transformer): incremental decoding with a model of kind decoder-only: decoder: attention trainer.trainOnlyAttention cannot decode incrementally"},
		{"joined batches for an encoder-decoder", seq2seq.m, Data{Train: lm.data.Train, Valid: lm.data.Valid}, "sources of length 0 and targets of length 8: an encoder-decoder reads sources"},
		{"joined batches for an encoder-only model", enc.m, Data{Train: lm.data.Train, Valid: lm.data.Valid}, "sources of length 0 and targets of length 8: an encoder-only model needs sources as long as targets"},
		{"batches longer than max_len", short, seq2seq.data, "sources of length 8 and targets of length 8: the model's max_len is 5"},
		{"held out with a decoder-only model on batches with sources", lm.m, Data{Train: enc.data.Train, Valid: enc.data.Valid, HeldOut: lm.data.HeldOut}, "a decoder-only model reads no sources"},
	}
	for _, tc := range tests {
		_, err := New(tc.m, lm.params, tc.d, options(t.TempDir(), 1), nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.want)
		}
	}
	for _, f := range []fixture{enc, lm, seq2seq} {
		if _, err := New(f.m, f.params, f.data, options(t.TempDir(), 1), nil); err != nil {
			t.Errorf("%T with held-out examples: %v", f.m, err)
		}
	}
	// Without held-out examples too, a decoder-only model is refused
	// batches with sources, which it would ignore.
	_, err = New(lm.m, lm.params, Data{Train: enc.data.Train, Valid: enc.data.Valid}, options(t.TempDir(), 1), nil)
	if err == nil || !strings.Contains(err.Error(), "a decoder-only model reads no sources") {
		t.Errorf("a decoder-only model on batches with sources: %v, want an error", err)
	}
}
