package main

import (
	"context"
	"log/slog"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/data"
	"github.com/transformer-go/transformer/data/sentencepiece"
	"github.com/transformer-go/transformer/internal/sysmem"
	"github.com/transformer-go/transformer/trainer"
	"github.com/transformer-go/transformer/trainer/rundir"
)

// corpus is the data of a run and the size of its vocabulary.
type corpus struct {
	data  trainer.Data
	vocab int
	// batches is the number of batches in an epoch.
	batches int
	// meta goes into every checkpoint: the data's fingerprint, and the
	// tokenizer's of files.
	meta map[string]string
	// tok is the tokenizer of files (nil for a synthetic task).
	tok data.Tokenizer
	// positions is the most positions a sequence of the data takes, in
	// training or in decoding the held-out examples: the model's max_len
	// must hold them.
	positions int
}

// loadCorpus builds the run's data: a synthetic task, or files tokenized
// with BPE. It writes nothing: a new run learns or loads its tokenizer, a
// resumed one (resume is its directory) reads its own bpe.txt and
// vocab.txt and never relearns them. Learning BPE stops when ctx is done.
func loadCorpus(ctx context.Context, s settings, log *slog.Logger, resume string) (corpus, error) {
	if s.synthetic() {
		return syntheticCorpus(s)
	}
	return fileCorpus(ctx, s, log, resume)
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
	c, err := batch(s, train, held, held, task.VocabSize())
	// The task's settings make its data: a run.json edited since (another
	// task, seed, size or length) would resume on other data.
	c.meta = map[string]string{data.DataFingerprintKey: data.ExamplesFingerprint(train, held), data.LongestSourceKey: longestSource(train)}
	return c, err
}

// longestSource is the most tokens of a source of train, its EOS
// included, or for a language model of text (whose examples have no
// sources) of a sentence, in decimal: translate warns of a longer one.
func longestSource(train []data.Example) string {
	n := 0
	for _, e := range train {
		n = max(n, len(e.Src))
	}
	if n == 0 {
		for _, e := range train {
			n = max(n, len(e.Tgt))
		}
	}
	return strconv.Itoa(n + 1)
}

// bucketStep is the step of the length buckets: finer for the short
// sequences of synthetic tasks, where padding to 8 would double the work.
func (s settings) bucketStep() int {
	if s.synthetic() {
		return 4
	}
	return data.DefaultBucketStep
}

// batch makes the batcher and the validation batches: joined (source EOS
// target as one sequence) for a model that reads no sources (decoder-only).
func batch(s settings, train, valid, heldOut []data.Example, vocab int) (corpus, error) {
	join := !s.layout().Sources
	bks := buckets(s.bucketStep(), join, train, valid)
	positions := longest(join, train, valid)
	for _, e := range heldOut {
		positions = max(positions, len(e.Tgt)+2) // greedy decoding's limit in exact match
	}
	if longest := bks[len(bks)-1]; longest > s.MaxTokens {
		return corpus{}, s.overBudget(longest)
	}
	b, err := data.NewBatcher(train, data.BatchConfig{MaxTokens: s.MaxTokens, Buckets: bks, Seed: s.Seed, Join: join})
	if err != nil {
		return corpus{}, err
	}
	vb, err := b.EvalBatches(valid)
	if err != nil {
		return corpus{}, errors.Wrap(err, "validation data")
	}
	return corpus{data: trainer.Data{Train: b, Valid: vb, HeldOut: heldOut}, vocab: vocab, batches: b.EpochLen(), positions: positions}, nil
}

// overBudget is the error for a longest example that takes more positions,
// padded to its length bucket, than -max-tokens lets a batch hold: it names
// the flags that fix it.
func (s settings) overBudget(positions int) error {
	lengths := "-max-len"
	if !s.synthetic() {
		lengths = "-max-sentence-len"
	}
	return errors.Errorf("-max-tokens %d: the longest example takes %d positions (padded to its length bucket), more than a batch holds; raise -max-tokens to at least %d, or lower %s",
		s.MaxTokens, positions, positions, lengths)
}

// buckets are length buckets of the given step over training and validation
// examples together, so validation fits the training shapes; of joined
// sequences if join.
func buckets(step int, join bool, sets ...[]data.Example) []int {
	return data.StepBuckets(step, longest(join, sets...))
}

// longest is the most positions an example of sets takes (a sequence and
// its EOS), joined if join.
func longest(join bool, sets ...[]data.Example) int {
	n := 0
	for _, set := range sets {
		for _, e := range set {
			n = max(n, len(e.Src)+1, len(e.Tgt)+1)
			if join {
				n = max(n, data.JoinedLen(e))
			}
		}
	}
	return n
}

func fileCorpus(ctx context.Context, s settings, log *slog.Logger, resume string) (corpus, error) {
	if err := openable(s, resume); err != nil {
		return corpus{}, err
	}
	train, err := readFiles(s, "training", s.TrainSrc, s.TrainTgt, log)
	if err != nil {
		return corpus{}, err
	}
	valid, err := readFiles(s, "validation", s.ValidSrc, s.ValidTgt, log)
	if err != nil {
		return corpus{}, err
	}
	tok, err := tokenizer(ctx, s, train, log, resume)
	if err != nil {
		return corpus{}, err
	}
	trainEx, validEx := data.EncodePairs(tok, train), data.EncodePairs(tok, valid)
	if err := s.checkAligned("-train-src", s.TrainSrc, s.TrainTgt, trainEx); err != nil {
		return corpus{}, err
	}
	if err := s.checkAligned("-valid-src", s.ValidSrc, s.ValidTgt, validEx); err != nil {
		return corpus{}, err
	}
	c, err := batch(s, trainEx, validEx, nil, tok.Len())
	if err != nil {
		return corpus{}, err
	}
	c.data.BLEU = bleuSample(s, tok, valid)
	c.meta = map[string]string{data.DataFingerprintKey: data.PairsFingerprint(train, valid), data.LongestSourceKey: longestSource(trainEx)}
	maps.Copy(c.meta, tok.Fingerprints())
	c.tok = tok
	return c, nil
}

// checkAligned refuses, for a model whose targets align with its sources
// (encoder-only), a pair of the files src and tgt whose sentences differ in
// tokens, naming its lines: the model predicts a target token at every
// source position.
func (s settings) checkAligned(flag, src, tgt string, ex []data.Example) error {
	if !s.layout().Aligned {
		return nil
	}
	for i, e := range ex {
		if len(e.Src) == len(e.Tgt) {
			continue
		}
		where, err := data.PairLine(src, tgt, s.readOptions(), i)
		if err != nil {
			return errors.Wrapf(err, "%s and its targets: pair %d", flag, i+1)
		}
		return errors.Errorf("%s: a source of %d tokens and a target of %d: -model %s predicts a target token at every source position, so each source needs as many tokens (after BPE) as its target",
			where, len(e.Src), len(e.Tgt), s.kind())
	}
	return nil
}

// openable checks that every input file opens before any is read, so that
// a mistyped -valid-tgt or -bpe is found before the training data are read
// (and BPE learned).
func openable(s settings, resume string) error {
	paths := [][2]string{{"-train-src", s.TrainSrc}, {"-train-tgt", s.TrainTgt}, {"-valid-src", s.ValidSrc}, {"-valid-tgt", s.ValidTgt}}
	if resume == "" {
		paths = append(paths, [2]string{"-bpe", s.BPEFile}, [2]string{"-spm", s.SPMFile})
	}
	for _, p := range paths {
		if p[1] == "" {
			continue
		}
		if err := canOpen(p[1]); err != nil {
			return errors.Wrap(err, p[0])
		}
	}
	return nil
}

// canOpen checks that path exists, and opens a regular file to check that
// it may be read; a pipe or a device is not opened, which could take its
// data.
func canOpen(path string) error {
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() {
		return err
	}
	f, err := os.Open(path)
	if err == nil {
		f.Close()
	}
	return err
}

// corpusShare: a corpus's text may take 1/corpusShare of the memory the
// process may allocate.
const corpusShare = 8

// readFiles reads the pairs of one split, or for a language model of text
// (settings.text) its target sentences alone.
func readFiles(s settings, split, src, tgt string, log *slog.Logger) ([]data.Pair, error) {
	opt := s.readOptions()
	var pairs []data.Pair
	var stats data.ReadStats
	var err error
	if s.text() {
		pairs, stats, err = data.ReadText(tgt, opt)
	} else {
		pairs, stats, err = data.ReadParallel(src, tgt, opt)
	}
	if err == nil {
		log.Info("read "+split+" sentences", "kept", stats.Kept, "skipped_empty", stats.SkippedEmpty, "skipped_long", stats.SkippedLong)
	}
	return pairs, err
}

// readOptions are the options the run's files are read with.
func (s settings) readOptions() data.ReadOptions {
	opt := data.ReadOptions{MaxLen: s.MaxSentLen}
	if l, ok := sysmem.Lowest(); ok {
		// The text is a fraction of what it becomes: token ids, BPE
		// statistics, batches.
		opt.MaxBytes, opt.Limit = l.Bytes/corpusShare, "1/"+strconv.Itoa(corpusShare)+" of "+l.String()
	}
	return opt
}

// bleuSample is the first -bleu-sample validation pairs, translated for BLEU
// every -bleu-every evaluations; nil if either is 0, or if the model does
// not translate (an encoder-only model, a language model of text).
func bleuSample(s settings, tok data.Tokenizer, valid []data.Pair) *trainer.BLEUSample {
	if s.BLEUEvery == 0 || s.BLEUSample == 0 || s.text() || s.layout().Aligned {
		return nil
	}
	b := &trainer.BLEUSample{Detokenize: tok.Decode, Every: s.BLEUEvery, KeepBest: s.KeepBest == "bleu"}
	for _, p := range valid[:min(s.BLEUSample, len(valid))] {
		b.Src = append(b.Src, tok.Encode(p.Src))
		b.Refs = append(b.Refs, p.Tgt)
	}
	return b
}

// tokenizer learns or loads BPE and builds the vocabulary of a new run,
// or loads its SentencePiece model (-spm), or reads a resumed run's own
// (resume is its directory).
func tokenizer(ctx context.Context, s settings, train []data.Pair, log *slog.Logger, resume string) (data.Tokenizer, error) {
	if resume != "" {
		return runTokenizer(resume)
	}
	if s.SPMFile != "" {
		tok, err := sentencepiece.LoadTokenizer(s.SPMFile)
		if err != nil {
			return nil, errors.Wrap(err, "-spm")
		}
		log.Info("SentencePiece model", "type", tok.Model().Type(), "pieces", tok.Model().Len(), "tokens", tok.Len())
		return tok, nil
	}
	var bpe *data.BPE
	var err error
	if s.BPEFile != "" {
		bpe, err = data.ReadBPEFile(s.BPEFile)
		err = errors.Wrap(err, "-bpe")
	} else {
		sentences := make([]string, 0, 2*len(train))
		for _, p := range train {
			if p.Src != "" {
				sentences = append(sentences, p.Src)
			}
			sentences = append(sentences, p.Tgt)
		}
		log.Info("learning BPE", "merges", s.BPEMerges, "sentences", len(sentences))
		bpe, err = data.LearnBPEContext(ctx, sentences, s.BPEMerges)
	}
	if err != nil {
		return nil, err
	}
	var seqs [][]string
	for _, p := range train {
		seqs = append(seqs, bpe.Encode(p.Src), bpe.Encode(p.Tgt)) // an empty source adds no token
	}
	vocab, err := data.BuildVocab(seqs, data.VocabOptions{})
	if err != nil {
		return nil, err
	}
	log.Info("vocabulary", "tokens", vocab.Len())
	return data.BPETokenizer{BPE: bpe, Vocab: vocab}, nil
}

// runTokenizer reads the tokenizer a run wrote: its SentencePiece model,
// or its BPE merges and vocabulary.
func runTokenizer(dir string) (data.Tokenizer, error) {
	if path := filepath.Join(dir, rundir.SentencePiece); fileExists(path) {
		tok, err := sentencepiece.LoadTokenizer(path)
		if err != nil {
			return nil, errors.Wrap(err, "the run's SentencePiece model")
		}
		return tok, nil
	}
	bpe, err := data.ReadBPEFile(filepath.Join(dir, rundir.BPE))
	if err != nil {
		return nil, errors.Wrap(err, "the run's BPE merges")
	}
	vocab, err := data.ReadVocabFile(filepath.Join(dir, rundir.Vocab))
	if err != nil {
		return nil, errors.Wrap(err, "the run's vocabulary")
	}
	return data.BPETokenizer{BPE: bpe, Vocab: vocab}, nil
}
