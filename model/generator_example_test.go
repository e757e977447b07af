package model_test

import (
	"context"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"os"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/data"
	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/layers"
	"github.com/transformer-go/transformer/layers/ops"
	"github.com/transformer-go/transformer/model"
	"github.com/transformer-go/transformer/model/decode"
	"github.com/transformer-go/transformer/trainer"
)

// RotaryLM is a model kind of one's own: a language model of one layer
// whose grouped-query attention places positions by rotating its queries
// and keys, so that its embeddings carry none. It is a model.Generator, so
// the trainer evaluates it by decoding and decode.New runs it one
// position at a time against a key/value cache.
type RotaryLM struct{ cfg model.Config }

// stack is its one layer: rotary grouped-query attention (2 key/value
// heads) and the paper's feed-forward network, pre-norm.
func (m RotaryLM) stack() layers.Stack {
	z := m.cfg.Sizes
	attn := layers.MultiHeadAttention{DModel: z.DModel, Heads: z.Heads, KVHeads: 2, Rotary: true}
	norm := layers.RMSNorm{DModel: z.DModel, Eps: z.Eps}
	return layers.Stack{Layer: layers.Layer{Sizes: z, SelfAttn: attn, Norm: norm}, N: 1, FinalNorm: norm}
}

func (m RotaryLM) Config() model.Config { return m.cfg }

// Layout: it reads the targets alone (joined batches: source EOS target).
func (m RotaryLM) Layout() model.Layout { return model.Layout{} }

func (m RotaryLM) Feed(p *graph.Program, b model.Batch) error {
	return model.Feed(p, b)
}

func (m RotaryLM) Build(s *graph.Scope, sh model.Shape) (loss, logp *G.Node) {
	ids := s.Input(model.InputTgtIn, tensor.Int, sh.Batch, sh.TgtLen)
	mask := ops.CausalMask(s, ids, model.PadID)
	targets := s.Input(model.InputTgtOut, tensor.Int, sh.Batch, sh.TgtLen)
	embed := layers.NewEmbedding(m.cfg.Vocab, m.cfg.DModel)
	x := m.stack().Apply(s.In("lm"), embed.Apply(s.In("embed"), ids), mask, nil, nil, nil)
	return model.Output(s, embed.Logits(s.In("embed"), x), targets, 0)
}

// Prefix: rows are fed BOS and the prompt before they generate.
func (m RotaryLM) Prefix(prompt []int) []int { return append([]int{model.BOSID}, prompt...) }

// Step computes one position with the same Apply, given the caches the
// layer declares, which st carries from step to step.
func (m RotaryLM) Step(st *model.Step) *G.Node {
	embed, stack := layers.NewEmbedding(m.cfg.Vocab, m.cfg.DModel), m.stack()
	caches := stack.Caches(st.Scope.In("lm"), st, &st.At, st.Rows, nil)
	y := stack.Apply(st.Scope.In("lm"), embed.Apply(st.Scope.In("embed"), st.IDs), nil, nil, nil, caches)
	return embed.Logits(st.Scope.In("embed"), y)
}

// A model kind of one's own trains with package trainer, which evaluates
// it by greedy decoding, and decodes with the key/value cache: the
// log-probability of its continuation is what its full forward pass gives
// the same tokens (model.ScorePairs).
func Example_ownModelKind() {
	task, err := data.NewTask("copy", data.TaskConfig{Symbols: 6, MinLen: 3, MaxLen: 5})
	if err != nil {
		log.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	train := make([]data.Example, 200)
	for i := range train {
		train[i] = task.Sample(rng)
	}
	batches, err := data.NewBatcher(train, data.BatchConfig{MaxTokens: 192, Join: true})
	if err != nil {
		log.Fatal(err)
	}
	valid, err := batches.EvalBatches(task.HeldOut(16))
	if err != nil {
		log.Fatal(err)
	}
	cfg, err := model.Preset("tiny", task.VocabSize())
	if err != nil {
		log.Fatal(err)
	}
	cfg.Kind, cfg.DModel, cfg.DFF, cfg.MaxLen = "rotary-lm", 32, 64, 64
	m := RotaryLM{cfg}
	params, err := model.NewParams(m, tensor.Float64, rand.New(rand.NewPCG(2, 2)))
	if err != nil {
		log.Fatal(err)
	}
	out, err := os.MkdirTemp("", "example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(out)
	opt := trainer.Options{Steps: 20, Warmup: new(10), LRFactor: new(1.0), Accumulate: 1, EvalEvery: 20, SaveEvery: 20, KeepLast: 1, OutDir: out}
	t, err := trainer.New(m, params, trainer.Data{Train: batches, Valid: valid, HeldOut: task.HeldOut(4)}, opt, nil)
	if err != nil {
		log.Fatal(err)
	}
	if err := t.Run(context.Background()); err != nil {
		log.Fatal(err)
	}

	d, err := decode.New(nil, m, params)
	if err != nil {
		log.Fatal(err)
	}
	defer d.Close()
	prompt := []int{5, 6, 7, model.EOSID} // continue "source EOS"
	hyps, err := d.Decode([][]int{prompt}, decode.Search{Method: decode.MethodGreedy, MaxLen: 6, Batch: 1})
	if err != nil {
		log.Fatal(err)
	}
	h := hyps[0][0]
	tgt := append([]int{model.BOSID}, h.Tokens...)
	if h.Ended {
		tgt = append(tgt, model.EOSID)
	}
	full, err := model.ScorePairs(nil, m, params, [][]int{prompt}, [][]int{tgt}, 1)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("parameters:", params.Count())
	fmt.Println("cached decoding agrees with the full pass:", math.Abs(full[0]-h.LogProb) < 1e-9)
	// Output:
	// parameters: 7776
	// cached decoding agrees with the full pass: true
}
