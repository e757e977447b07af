package inference_test

import (
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/data"
	"github.com/transformer-go/transformer/inference"
	"github.com/transformer-go/transformer/model"
	"github.com/transformer-go/transformer/model/checkpoint"
	"github.com/transformer-go/transformer/model/decode"
	"github.com/transformer-go/transformer/trainer/rundir"
)

// A run directory, as trainer.New leaves one (here written by hand, with
// random weights): its tokenizer and final.safetensors, whose metadata
// records the tokenizer's fingerprints. Load rebuilds the model and checks
// the tokenizer in one call; the Run translates strings.
func ExampleLoad() {
	dir, err := os.MkdirTemp("", "run")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	words := strings.Fields("eins zwei drei one two three")
	bpe, err := data.LearnBPE(words, 20)
	if err != nil {
		log.Fatal(err)
	}
	var seqs [][]string
	for _, w := range words {
		seqs = append(seqs, bpe.Encode(w))
	}
	vocab, err := data.BuildVocab(seqs, data.VocabOptions{})
	if err != nil {
		log.Fatal(err)
	}
	if err := bpe.WriteFile(filepath.Join(dir, rundir.BPE)); err != nil {
		log.Fatal(err)
	}
	if err := vocab.WriteFile(filepath.Join(dir, rundir.Vocab)); err != nil {
		log.Fatal(err)
	}
	cfg, err := model.Preset("tiny", vocab.Len())
	if err != nil {
		log.Fatal(err)
	}
	cfg.DModel, cfg.Heads, cfg.DFF = 32, 4, 64
	m, err := model.FromConfig(cfg, nil)
	if err != nil {
		log.Fatal(err)
	}
	params, err := model.NewParams(m, tensor.Float32, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		log.Fatal(err)
	}
	meta := map[string]string{data.BPEFingerprintKey: bpe.Fingerprint(), data.VocabFingerprintKey: vocab.Fingerprint()}
	if err := checkpoint.Save(filepath.Join(dir, rundir.Final), cfg, params, meta); err != nil {
		log.Fatal(err)
	}

	run, err := inference.Load(dir, "final")
	if err != nil {
		log.Fatal(err)
	}
	out, err := run.Translate([]string{"drei eins", "zwei"}, decode.Search{Method: decode.MethodGreedy, MaxLen: 3, Batch: 2})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s, kind %s, %d translations\n", filepath.Base(run.Path), run.Model.Config().Kind, len(out))
	// Output:
	// final.safetensors, kind encoder-decoder, 2 translations
}

// Export a model as ONNX: the encoder, one decoding step with its
// key/value caches as inputs and outputs, and the teacher-forced scorer,
// in fixed shapes, for ONNX Runtime (cmd/export writes a run's; its
// greedy.js decodes with them under Node).
func ExampleExportONNX() {
	cfg, err := model.Preset("tiny", 50)
	if err != nil {
		log.Fatal(err)
	}
	cfg.DModel, cfg.Heads, cfg.DFF, cfg.MaxLen = 32, 4, 64, 64
	m, err := model.FromConfig(cfg, nil)
	if err != nil {
		log.Fatal(err)
	}
	params, err := model.NewParams(m, tensor.Float32, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		log.Fatal(err)
	}
	sh := inference.ONNXShape{Batch: 1, SrcLen: 32, TgtLen: 32, Steps: 64}
	files, err := inference.ExportONNX(m, params, sh)
	if err != nil {
		log.Fatal(err)
	}
	for _, name := range inference.ONNXFiles(m) {
		fmt.Println(name, len(files[name]) > 0)
	}
	// Output:
	// encoder.onnx true
	// scorer.onnx true
	// step.onnx true
}
