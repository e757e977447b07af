package main

import (
	"log/slog"
	"math/rand/v2"
	"path/filepath"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/data"
	"github.com/transformer-go/transformer/trainer"
	"github.com/transformer-go/transformer/trainer/rundir"
)

// corpus is the data of a run and the size of its vocabulary.
type corpus struct {
	data  trainer.Data
	vocab int
	// batches is the number of batches in an epoch.
	batches int
	// meta goes into every checkpoint: the tokenizer's fingerprints.
	meta map[string]string
}

// loadCorpus builds the run's data: a synthetic task, or files tokenized with
// BPE, whose merges and vocabulary are written to the output directory if
// write.
func loadCorpus(s settings, log *slog.Logger, write bool) (corpus, error) {
	if s.synthetic() {
		return syntheticCorpus(s)
	}
	return fileCorpus(s, log, write)
}

func syntheticCorpus(s settings) (corpus, error) {
	task, err := data.NewTask(s.Task, data.TaskConfig{Symbols: s.Symbols, MinLen: s.MinLen, MaxLen: s.MaxLen})
	if err != nil {
		return corpus{}, err
	}
	rng := rand.New(rand.NewPCG(s.Seed, 1))
	train := make([]data.Example, s.TrainSize)
	for i := range train {
		train[i] = task.Sample(rng)
	}
	held := task.HeldOut(s.HeldOut)
	return batch(s, train, held, held, task.VocabSize())
}

// bucketStep is the step of the length buckets: finer for the short
// sequences of synthetic tasks, where padding to 8 would double the work.
func (s settings) bucketStep() int {
	if s.synthetic() {
		return 4
	}
	return data.DefaultBucketStep
}

// batch makes the batcher and the validation batches.
func batch(s settings, train, valid, heldOut []data.Example, vocab int) (corpus, error) {
	b, err := data.NewBatcher(train, data.BatchConfig{MaxTokens: s.MaxTokens, Buckets: buckets(s.bucketStep(), train, valid), Seed: s.Seed})
	if err != nil {
		return corpus{}, err
	}
	vb, err := b.EvalBatches(valid)
	if err != nil {
		return corpus{}, errors.Wrap(err, "validation data")
	}
	return corpus{data: trainer.Data{Train: b, Valid: vb, HeldOut: heldOut}, vocab: vocab, batches: b.EpochLen()}, nil
}

// buckets are length buckets of the given step over training and validation
// examples together, so validation fits the training shapes.
func buckets(step int, sets ...[]data.Example) []int {
	longest := 0
	for _, set := range sets {
		for _, e := range set {
			longest = max(longest, len(e.Src)+1, len(e.Tgt)+1)
		}
	}
	return data.StepBuckets(step, longest)
}

func fileCorpus(s settings, log *slog.Logger, write bool) (corpus, error) {
	opt := data.ReadOptions{MaxLen: s.MaxSentLen}
	train, stats, err := data.ReadParallel(s.TrainSrc, s.TrainTgt, opt)
	if err != nil {
		return corpus{}, err
	}
	log.Info("read training pairs", "kept", stats.Kept, "skipped_empty", stats.SkippedEmpty, "skipped_long", stats.SkippedLong)
	valid, vstats, err := data.ReadParallel(s.ValidSrc, s.ValidTgt, opt)
	if err != nil {
		return corpus{}, err
	}
	log.Info("read validation pairs", "kept", vstats.Kept, "skipped_empty", vstats.SkippedEmpty, "skipped_long", vstats.SkippedLong)
	tok, err := tokenizer(s, train, log, write)
	if err != nil {
		return corpus{}, err
	}
	c, err := batch(s, tok.EncodePairs(train), tok.EncodePairs(valid), nil, tok.Vocab.Len())
	if err != nil {
		return corpus{}, err
	}
	c.data.BLEU = bleuSample(s, tok, valid)
	c.meta = map[string]string{data.BPEFingerprintKey: tok.BPE.Fingerprint(), data.VocabFingerprintKey: tok.Vocab.Fingerprint()}
	return c, nil
}

// bleuSample is the first -bleu-sample validation pairs, translated for BLEU
// every -bleu-every evaluations; nil if either is 0.
func bleuSample(s settings, tok data.Tokenizer, valid []data.Pair) *trainer.BLEUSample {
	if s.BLEUEvery == 0 || s.BLEUSample == 0 {
		return nil
	}
	b := &trainer.BLEUSample{Detokenize: tok.Decode, Every: s.BLEUEvery, KeepBest: s.KeepBest == "bleu"}
	for _, p := range valid[:min(s.BLEUSample, len(valid))] {
		b.Src = append(b.Src, tok.Encode(p.Src))
		b.Refs = append(b.Refs, p.Tgt)
	}
	return b
}

// tokenizer learns or loads BPE, builds the vocabulary, and writes both to
// OUT/bpe.txt and OUT/vocab.txt.
func tokenizer(s settings, train []data.Pair, log *slog.Logger, write bool) (data.Tokenizer, error) {
	var bpe *data.BPE
	var err error
	if s.BPEFile != "" {
		bpe, err = data.ReadBPEFile(s.BPEFile)
	} else {
		sentences := make([]string, 0, 2*len(train))
		for _, p := range train {
			sentences = append(sentences, p.Src, p.Tgt)
		}
		log.Info("learning BPE", "merges", s.BPEMerges, "sentences", len(sentences))
		bpe, err = data.LearnBPE(sentences, s.BPEMerges)
	}
	if err != nil {
		return data.Tokenizer{}, err
	}
	var seqs [][]string
	for _, p := range train {
		seqs = append(seqs, bpe.Encode(p.Src), bpe.Encode(p.Tgt))
	}
	vocab, err := data.BuildVocab(seqs, data.VocabOptions{})
	if err != nil {
		return data.Tokenizer{}, err
	}
	if write {
		if err := bpe.WriteFile(filepath.Join(s.Out, rundir.BPE)); err != nil {
			return data.Tokenizer{}, err
		}
		if err := vocab.WriteFile(filepath.Join(s.Out, rundir.Vocab)); err != nil {
			return data.Tokenizer{}, err
		}
	}
	log.Info("vocabulary", "tokens", vocab.Len())
	return data.Tokenizer{BPE: bpe, Vocab: vocab}, nil
}
