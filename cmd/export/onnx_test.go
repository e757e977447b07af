package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/data"
	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/inference"
	"github.com/transformer-go/transformer/internal/onnxtest"
	"github.com/transformer-go/transformer/model"
	"github.com/transformer-go/transformer/model/checkpoint"
	"github.com/transformer-go/transformer/model/decode"
	"github.com/transformer-go/transformer/trainer"
)

// multi30kDir is where the shared Multi30k files live, relative to this
// package (see ../../../shared/README.md).
const multi30kDir = "../../../shared/data/multi30k"

// corpus is Multi30k tokenized for the tests: a BPE and vocabulary learned
// on the first training pairs, and the first validation pairs as ids.
type corpus struct {
	train    []data.Pair
	tok      data.BPETokenizer
	src, tgt [][]int // validation sources and targets, without EOS
}

// readCorpus learns a tokenizer of merges merges on the first nTrain
// training pairs and tokenizes the first nVal validation pairs. Without
// the data the test fails under CI=true and is skipped otherwise.
func readCorpus(t *testing.T, nTrain, merges, nVal int) corpus {
	t.Helper()
	if _, err := os.Stat(filepath.Join(multi30kDir, "val.de.gz")); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Multi30k data missing: %v (see shared/README.md)", err)
		}
		t.Skipf("Multi30k data missing, skipping: %v", err)
	}
	read := func(split string) []data.Pair {
		pairs, _, err := data.ReadParallel(filepath.Join(multi30kDir, split+".de.gz"), filepath.Join(multi30kDir, split+".en.gz"), data.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return pairs
	}
	train, val := read("train")[:nTrain], read("val")[:nVal]
	var text []string
	for _, p := range train {
		text = append(text, p.Src, p.Tgt)
	}
	c := newCorpus(t, text, merges)
	c.train = train
	for _, p := range val {
		c.src, c.tgt = append(c.src, c.tok.Encode(p.Src)), append(c.tgt, c.tok.Encode(p.Tgt))
	}
	return c
}

// newCorpus is a corpus of a BPE of merges merges learned on text and
// the vocabulary of text's tokens.
func newCorpus(t *testing.T, text []string, merges int) corpus {
	t.Helper()
	bpe, err := data.LearnBPE(text, merges)
	if err != nil {
		t.Fatal(err)
	}
	var seqs [][]string
	for _, s := range text {
		seqs = append(seqs, bpe.Encode(s))
	}
	vocab, err := data.BuildVocab(seqs, data.VocabOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return corpus{tok: data.BPETokenizer{BPE: bpe, Vocab: vocab}}
}

// newModel is a model of cfg with random float32 weights.
func newModel(t *testing.T, cfg model.Config) (model.Model, *graph.Params) {
	t.Helper()
	m, params, err := model.Init(cfg, tensor.Float32, 1)
	if err != nil {
		t.Fatal(err)
	}
	return m, params
}

// writeRun writes what cmd/train leaves for a model of cfg on the corpus's
// tokenizer, with random weights: bpe.txt, vocab.txt and best.safetensors.
func writeRun(t *testing.T, c corpus, cfg model.Config) (string, model.Model, *graph.Params) {
	t.Helper()
	dir := t.TempDir()
	m, params := newModel(t, cfg)
	for _, err := range []error{trainer.SaveTokenizer(c.tok, dir), checkpoint.Save(filepath.Join(dir, "best.safetensors"), m.Config(), params, c.tok.Fingerprints())} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return dir, m, params
}

// trainRun trains a model of cfg briefly (steps updates of Adam, no
// dropout) on the first nTrain pairs of Multi30k's training set, with the
// corpus's tokenizer, and returns its run directory, where the trainer
// wrote final.safetensors, bpe.txt and vocab.txt, and the model. A
// decoder-only model learns "source EOS target" as one sequence; an
// encoder-only model learns to tag each source token with itself.
func trainRun(t *testing.T, c corpus, cfg model.Config, steps int) (string, model.Model, *graph.Params) {
	t.Helper()
	examples := data.EncodePairs(c.tok, c.train)
	if cfg.Kind == model.KindEncoderOnly {
		for i := range examples {
			examples[i].Tgt = examples[i].Src
		}
	}
	batches, err := data.NewBatcher(examples[100:], data.BatchConfig{MaxTokens: 1024, Seed: 3, Join: cfg.Kind == model.KindDecoderOnly})
	if err != nil {
		t.Fatal(err)
	}
	valid, err := batches.EvalBatches(examples[:100])
	if err != nil {
		t.Fatal(err)
	}
	cfg.Dropout = 0
	m, params := newModel(t, cfg)
	dir := t.TempDir()
	opt := trainer.Options{Steps: steps, Schedule: trainer.ScheduleConstant, LR: new(2e-3), Warmup: new(steps / 5), EvalEvery: steps, KeepLast: 1, OutDir: dir}
	tr, err := trainer.New(m, params, trainer.Data{Train: batches, Valid: valid, Tokenizer: c.tok}, opt, trainer.NewReporter(io.Discard, nil))
	if err == nil {
		err = tr.Run(context.Background())
	}
	if err != nil {
		t.Fatal(err)
	}
	return dir, m, params
}

// exportRun runs the command on the run dir with args and returns the
// directory it wrote.
func exportRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out := t.TempDir()
	var stdout bytes.Buffer
	if err := run(append([]string{"-model", dir, "-out", out}, args...), &stdout); err != nil {
		t.Fatalf("export %v: %v", args, err)
	}
	return out
}

// TestONNXRuntimeAgrees exports runs of Multi30k on a BPE of 2,000
// merges learned from its first 3,000 training pairs, and checks the
// files with ONNX's checker and against ONNX Runtime: the scorer's
// log-probabilities against ours on 10 validation pairs, and on the first
// 100 validation sentences the tokens of greedy decoding (greedy.js, with
// encoder.onnx and step.onnx) against decode's, or an encoder-only model's
// tags (tagger.onnx) against model.Tag's. The tiny, decoder-only and
// encoder-only runs are trained briefly (150, 150 and 60 updates; the
// encoder-only model learns to tag each token with itself); base has
// random weights, its preset's sizes and two layers a stack, which the
// export treats as it does six.
func TestONNXRuntimeAgrees(t *testing.T) {
	if testing.Short() {
		t.Skip("trains and decodes four models (about two minutes): not with -short")
	}
	onnxtest.Require(t)
	c := readCorpus(t, 3000, 2000, 100)
	tiny, _ := model.Preset("tiny", c.tok.Len())
	base, _ := model.Preset("base", c.tok.Len())
	base.EncoderLayers, base.DecoderLayers = 2, 2
	decoderOnly, encoderOnly := tiny, tiny
	decoderOnly.Kind, encoderOnly.Kind = model.KindDecoderOnly, model.KindEncoderOnly
	for _, tc := range []struct {
		name  string
		cfg   model.Config
		steps int // of training; 0: random weights
	}{{"tiny", tiny, 150}, {"base", base, 0}, {"decoder-only", decoderOnly, 150}, {"encoder-only", encoderOnly, 60}} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			var dir string
			var m model.Model
			var params *graph.Params
			if tc.steps > 0 {
				dir, m, params = trainRun(t, c, tc.cfg, tc.steps)
			} else {
				dir, m, params = writeRun(t, c, tc.cfg)
			}
			t.Logf("run ready in %v", time.Since(start))
			srcLen, tgtLen, steps := shapeFor(c)
			args := []string{"-batch", "10"}
			if m.Layout().Sources {
				args = append(args, "-src-len", fmt.Sprint(srcLen))
			}
			if !m.Layout().Aligned {
				args = append(args, "-tgt-len", fmt.Sprint(tgtLen), "-steps", fmt.Sprint(steps))
			}
			out := exportRun(t, dir, args...)
			var paths []string
			for _, name := range inference.ONNXFiles(m) {
				paths = append(paths, filepath.Join(out, name))
			}
			onnxtest.Check(t, paths...)
			onnxtest.CheckScorer(t, m, params, out, onnxtest.PadBatch(m.Layout(), c.src, c.tgt, 10, srcLen, tgtLen))
			switch {
			case m.Layout().Aligned:
				onnxtest.CheckTagger(t, m, params, out, c.src, 10, srcLen)
			case m.Layout().Sources:
				onnxtest.CheckGreedy(t, m, params, out, c.src)
			default: // a decoder-only model continues "source EOS"
				prompts := make([][]int, len(c.src))
				for i, s := range c.src {
					prompts[i] = model.Ended(s)
				}
				onnxtest.CheckGreedy(t, m, params, out, prompts)
			}
		})
	}
}

// shapeFor is the source and target positions that hold every source and
// target of c with its EOS (and BOS), and the cache positions that hold a
// prompt of a source and 50 tokens more than it.
func shapeFor(c corpus) (srcLen, tgtLen, steps int) {
	for i := range c.src {
		srcLen, tgtLen = max(srcLen, len(c.src[i])+1), max(tgtLen, len(c.tgt[i])+1)
	}
	return srcLen, tgtLen, 2*srcLen + decode.DefaultExtraLen
}
