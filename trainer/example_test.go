package trainer_test

import (
	"context"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/data"
	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/inference"
	"github.com/transformer-go/transformer/layers"
	"github.com/transformer-go/transformer/model"
	"github.com/transformer-go/transformer/model/checkpoint"
	"github.com/transformer-go/transformer/model/decode"
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
	opt := trainer.Options{Steps: 20, Warmup: new(10), LRFactor: new(1.0), Accumulate: 1, EvalEvery: 20, SaveEvery: 20, KeepLast: 1, OutDir: out}
	t, err := trainer.New(m, params, trainer.Data{Train: batches, Valid: valid}, opt, nil)
	if err != nil {
		log.Fatal(err)
	}
	if err := t.Run(context.Background()); err != nil {
		log.Fatal(err)
	}

	loaded, weights, err := checkpoint.Load(filepath.Join(out, "final.safetensors"), tensor.Float32, reg)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("rebuilt: %T, ffn %s, %d parameters\n", loaded, loaded.Config().FFN, weights.Count())
	d, err := decode.New(nil, loaded, weights)
	if err != nil {
		log.Fatal(err)
	}
	defer d.Close()
	prompt := []int{5, 6, 7, model.EOSID} // continue "source EOS"
	hyps, err := d.Decode([][]int{prompt}, decode.Search{Method: decode.MethodGreedy, MaxLen: 6, Batch: 1})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("continuations:", len(hyps[0]))
	// Output:
	// gradients: <nil>
	// rebuilt: *model.Transformer, ffn nobias, 17216 parameters
	// continuations: 1
}

// numbers is a toy German→English corpus: one to four number words,
// translated word by word.
func numbers(n int, seed uint64) []data.Pair {
	de := strings.Fields("eins zwei drei vier fünf sechs sieben acht neun")
	en := strings.Fields("one two three four five six seven eight nine")
	rng := rand.New(rand.NewPCG(seed, 1))
	pairs := make([]data.Pair, n)
	for i := range pairs {
		var src, tgt []string
		for range 1 + rng.IntN(4) {
			w := rng.IntN(len(de))
			src, tgt = append(src, de[w]), append(tgt, en[w])
		}
		pairs[i] = data.Pair{Src: strings.Join(src, " "), Tgt: strings.Join(tgt, " ")}
	}
	return pairs
}

// numbersRun is a run on numbers, ready to New: an encoder-decoder and its
// data, with the tokenizer that New writes to the run directory (bpe.txt
// and vocab.txt, their fingerprints in every checkpoint) for inference.Load.
func numbersRun() (model.Model, *graph.Params, trainer.Data) {
	pairs := numbers(600, 1)
	var text []string
	for _, p := range pairs {
		text = append(text, p.Src, p.Tgt)
	}
	bpe, err := data.LearnBPE(text, 100)
	check(err)
	var seqs [][]string
	for _, s := range text {
		seqs = append(seqs, bpe.Encode(s))
	}
	vocab, err := data.BuildVocab(seqs, data.VocabOptions{})
	check(err)
	return numbersModel(data.BPETokenizer{BPE: bpe, Vocab: vocab}, pairs)
}

// numbersModel is an encoder-decoder for the pairs of numbers and its
// data, the pairs encoded by tok, the first 500 for training.
func numbersModel(tok data.Tokenizer, pairs []data.Pair) (model.Model, *graph.Params, trainer.Data) {
	batches, err := data.NewBatcher(data.EncodePairs(tok, pairs[:500]), data.BatchConfig{MaxTokens: 256, Seed: 2})
	check(err)
	valid, err := batches.EvalBatches(data.EncodePairs(tok, pairs[500:]))
	check(err)
	cfg, err := model.Preset("tiny", tok.Len())
	check(err)
	cfg.DModel, cfg.Heads, cfg.DFF, cfg.Dropout = 64, 4, 128, 0
	m, err := model.FromConfig(cfg, nil)
	check(err)
	params, err := model.NewParams(m, tensor.Float32, rand.New(rand.NewPCG(3, 3)))
	check(err)
	return m, params, trainer.Data{Train: batches, Valid: valid, Tokenizer: tok}
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

// stopAfter cancels a run after the given step, as Ctrl-C would.
type stopAfter struct {
	trainer.Reporter
	step   int
	cancel context.CancelFunc
}

func (s stopAfter) Step(i trainer.StepInfo) {
	if i.Step == s.step {
		s.cancel()
	}
}

// Train with AdamW and a cosine schedule, stop the run (as Ctrl-C would),
// resume it (to the very weights of a run never stopped, as
// TestResumeIsExactForEachOptimizerAndSchedule checks), then load the run
// directory in one call and translate sentences.
func Example_adamWCosineResumeAndLoad() {
	dir, err := os.MkdirTemp("", "run")
	check(err)
	defer os.RemoveAll(dir)
	opt := trainer.Options{Steps: 300, OutDir: dir,
		Optimizer: trainer.OptimizerAdamW, Schedule: trainer.ScheduleCosine, LR: new(2e-3), Warmup: new(30)}

	// The first run stops after 60 updates, checkpointing them.
	m, params, d := numbersRun()
	ctx, cancel := context.WithCancel(context.Background())
	t, err := trainer.New(m, params, d, opt, stopAfter{trainer.Quiet, 60, cancel})
	check(err)
	fmt.Println("stopped:", t.Run(ctx))

	// A new process's worth of objects resumes it.
	m, params, d = numbersRun()
	t, err = trainer.New(m, params, d, opt, trainer.Quiet)
	check(err)
	r, err := t.Resume(dir)
	check(err)
	fmt.Println("resumed at step", r.Step)
	check(t.Run(context.Background()))

	run, err := inference.Load(dir, "final")
	check(err)
	out, err := run.Translate([]string{"drei eins vier", "neun acht"}, decode.DefaultSearch())
	check(err)
	fmt.Printf("%q\n", out)

	// A saliency map: which source token sways the target token "one"?
	src, tgt := run.Tokenizer.Encode("drei eins vier"), run.Tokenizer.Encode("three one four")
	t1 := slices.Index(tgt, run.Tokenizer.Encode("one")[0])
	grad, err := model.Saliency(nil, run.Model, run.Params, src, tgt, t1)
	check(err)
	fmt.Println(`"one" is swayed most by`, run.Tokenizer.Decode(src[mostSalient(grad, len(src)):][:1]))
	// Output:
	// stopped: training interrupted
	// resumed at step 60
	// ["three one four" "nine eight"]
	// "one" is swayed most by eins
}

// mostSalient is the source token, of the first n rows of the saliency
// map grad [n+1, dModel] (the last row is EOSID's), whose row has the
// largest norm.
func mostSalient(grad *tensor.Dense, n int) int {
	g, d := graph.Float64s(grad), grad.Shape()[1]
	best, bestNorm := 0, 0.0
	for i := range min(n, grad.Shape()[0]) {
		var sq float64
		for _, v := range g[i*d : (i+1)*d] {
			sq += v * v
		}
		if sq > bestNorm {
			best, bestNorm = i, sq
		}
	}
	return best
}
