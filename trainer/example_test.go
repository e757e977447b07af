package trainer_test

import (
	"context"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/data"
	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/layers"
	"github.com/transformer-go/transformer/model"
	"github.com/transformer-go/transformer/trainer"
)

// NoBiasFFN is a feed-forward sublayer of one's own: the paper's network
// without biases (as PaLM has it), FFN(x) = max(0, x·W1ᵀ)·W2ᵀ.
type NoBiasFFN struct{ DModel, DFF int }

// Apply maps x [..., dModel] to [..., dModel].
func (f NoBiasFFN) Apply(s *graph.Scope, x *G.Node) *G.Node {
	h := s.ReLU(layers.Linear{In: f.DModel, Out: f.DFF, NoBias: true}.Apply(s.In("linear1"), x))
	return layers.Linear{In: f.DFF, Out: f.DModel, NoBias: true}.Apply(s.In("linear2"), h)
}

// A sublayer of one's own, end to end: register it, check its gradients,
// train a decoder-only model that uses it, rebuild the model from its
// checkpoint with one call, and continue a prompt with the key/value cache.
func Example_ownSublayer() {
	reg := layers.NewRegistry()
	err := reg.FFN.Register("nobias", func(z layers.Sizes) layers.FFN { return NoBiasFFN{DModel: z.DModel, DFF: z.DFF} })
	if err != nil {
		log.Fatal(err)
	}
	check := graph.GradCheck{Build: func(s *graph.Scope) *G.Node {
		x := s.Param("x", tensor.Shape{2, 3, 8}, graph.Normal(1))
		return NoBiasFFN{DModel: 8, DFF: 16}.Apply(s, x)
	}}
	fmt.Println("gradients:", check.Run())

	// The copy task, as one sequence per example: source EOS target.
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
	cfg.Kind, cfg.FFN, cfg.DModel, cfg.DFF = model.KindDecoderOnly, "nobias", 32, 64
	m, err := model.FromConfig(cfg, reg)
	if err != nil {
		log.Fatal(err)
	}
	params, err := model.NewParams(m, tensor.Float32, rand.New(rand.NewPCG(2, 2)))
	if err != nil {
		log.Fatal(err)
	}
	out, err := os.MkdirTemp("", "example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(out)
	opt := trainer.Options{Steps: 20, Warmup: 10, LRFactor: 1, Accumulate: 1, EvalEvery: 20, SaveEvery: 20, KeepLast: 1, OutDir: out}
	t, err := trainer.New(m, params, trainer.Data{Train: batches, Valid: valid}, opt, nil)
	if err != nil {
		log.Fatal(err)
	}
	if err := t.Run(context.Background()); err != nil {
		log.Fatal(err)
	}

	loaded, weights, err := model.Load(filepath.Join(out, "final.safetensors"), tensor.Float32, reg)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("rebuilt: %T, ffn %s, %d parameters\n", loaded, loaded.Config().FFN, weights.Count())
	d, err := model.NewDecoder(loaded, weights)
	if err != nil {
		log.Fatal(err)
	}
	defer d.Close()
	prompt := []int{5, 6, 7, model.EOSID} // continue "source EOS"
	hyps, err := d.Decode([][]int{prompt}, model.Search{Method: model.MethodGreedy, MaxLen: 6, Batch: 1})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("continuations:", len(hyps[0]))
	// Output:
	// gradients: <nil>
	// rebuilt: *model.Transformer, ffn nobias, 17216 parameters
	// continuations: 1
}
