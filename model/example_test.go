package model_test

import (
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/layers"
	"github.com/transformer-go/transformer/layers/ops"
	"github.com/transformer-go/transformer/model"
	"github.com/transformer-go/transformer/model/checkpoint"
)

// A pre-norm decoder-only (GPT-style) model with RMSNorm and learned
// positions, from a preset.
func ExampleNewDecoderOnly() {
	cfg, err := model.Preset("small", 8000)
	if err != nil {
		log.Fatal(err)
	}
	cfg.PreNorm, cfg.Norm, cfg.Positions = true, "rms", "learned"
	m, err := model.NewDecoderOnly(cfg)
	if err != nil {
		log.Fatal(err)
	}
	params, err := model.NewParams(m, tensor.Float32, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		log.Fatal(err)
	}
	prog, err := model.CompileTrain(nil, m, params, model.Shape{Batch: 32, TgtLen: 64}, rand.New(rand.NewPCG(3, 4)))
	if err != nil {
		log.Fatal(err)
	}
	defer prog.Close()
	fmt.Println("parameters:", params.Count())
	// Output: parameters: 4678144
}

// decoderOnly builds by hand, from package layers, the graph that
// model.NewDecoderOnly builds for the preset "small" with pre-norm, RMSNorm
// and learned positions, and returns its loss: the same parameter names
// (decoder.pos.weight, …), the same inputs (tgt_in, tgt_out), MaxLen 1024.
func decoderOnly(s *graph.Scope, vocab, batch, length int) *G.Node {
	ids := s.Input(model.InputTgtIn, tensor.Int, batch, length)      // BOS y1 … yn
	mask := ops.CausalMask(s, ids, model.PadID)                      // [batch, 1, length, length]
	targets := s.Input(model.InputTgtOut, tensor.Int, batch, length) // y1 … yn EOS
	z := layers.Sizes{DModel: 256, Heads: 8, DFF: 1024, Dropout: 0.1, Eps: 1e-5, PreNorm: true, MaxLen: 1024}
	embed := layers.NewEmbedding(vocab, z.DModel)
	x := embed.Apply(s.In("embed"), ids)
	x = s.Dropout(layers.Learned{MaxLen: z.MaxLen, DModel: z.DModel}.Apply(s.In("decoder", "pos"), x, nil), z.Dropout)
	norm := layers.RMSNorm{DModel: z.DModel, Eps: z.Eps}
	stack := layers.Stack{
		Layer: layers.Layer{Sizes: z, Norm: norm}, // the paper's attention and feed-forward
		N:     3, FinalNorm: norm,
	}
	x = stack.Apply(s.In("decoder"), x, mask, nil, nil, nil)
	loss, _ := model.Output(s, embed.Logits(s.In("embed"), x), targets, 0.1)
	return loss
}

// The decoder-only model by hand loads model.NewDecoderOnly's checkpoint
// and computes the same loss.
func Example_decoderOnlyByHand() {
	const vocab = 1000
	cfg, err := model.Preset("small", vocab)
	if err != nil {
		log.Fatal(err)
	}
	cfg.PreNorm, cfg.Norm, cfg.Positions = true, "rms", "learned"
	m, err := model.NewDecoderOnly(cfg)
	if err != nil {
		log.Fatal(err)
	}
	params, err := model.NewParams(m, tensor.Float64, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "lm.safetensors")
	if err := checkpoint.Save(path, m.Config(), params, nil); err != nil {
		log.Fatal(err)
	}

	// The graph by hand, its parameters restored from the checkpoint.
	byHand, err := graph.NewParams(tensor.Float64, rand.New(rand.NewPCG(5, 6)))
	if err != nil {
		log.Fatal(err)
	}
	b := model.Batch{Shape: model.Shape{Batch: 2, TgtLen: 4},
		TgtIn: []int{model.BOSID, 7, 8, 9, model.BOSID, 10, 0, 0}, TgtOut: []int{7, 8, 9, model.EOSID, 10, model.EOSID, 0, 0}}
	s := graph.NewScope(byHand)
	prog, err := graph.Compile(nil, s, decoderOnly(s, vocab, b.Batch, b.TgtLen), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer prog.Close()
	ck, err := checkpoint.Read(path)
	if err != nil {
		log.Fatal(err)
	}
	if err := ck.Restore(byHand); err != nil { // fails unless names and shapes are the model's
		log.Fatal(err)
	}

	// The model's own graph on the same batch.
	s2 := graph.NewScope(params)
	loss, _ := m.Build(s2, b.Shape)
	want, err := graph.Compile(nil, s2, loss, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer want.Close()
	for _, p := range []*graph.Program{prog, want} {
		if err := model.Feed(p, b); err != nil {
			log.Fatal(err)
		}
		if err := p.Run(); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Println("same parameters:", slices.Equal(byHand.Names(), params.Names()))
	got, err := prog.Loss()
	if err != nil {
		log.Fatal(err)
	}
	same, err := want.Loss()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("same loss:", got == same)
	// Output:
	// same parameters: true
	// same loss: true
}
