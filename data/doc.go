// Package data prepares text and synthetic sequences for training and
// evaluating a sequence-to-sequence Transformer. It depends on no tensor
// library: everything it produces is plain Go ints and strings.
//
// Translation data flows through these steps:
//
//	ReadParallel / ReadTSV   sentence pairs from (gzip) text files   []Pair
//	Pretokenize              reversible split into word pieces       []string
//	LearnBPE, BPE.Encode     subword tokens of each piece            []string
//	BuildVocab, Vocab        tokens to ids, reserved ids 0..3        []int
//	EncodePairs              pairs to id sequences                   []Example
//	NewBatcher, Next         padded, bucketed, shuffled batches      Batch
//
// and back: a model's output ids go through Tokenizer.Decode (for a
// BPETokenizer, Vocab to tokens, Detokenize to text), which reproduces the
// input sentence up to white space. Tokenizer is an interface: the
// BPETokenizer above, or a SentencePiece model's (package
// data/sentencepiece), whose ids start with the same reserved ids.
//
// Pretokenize marks each piece that starts a word with SpaceMarker ("▁"),
// so the pieces, and the subword tokens BPE makes of them, carry the
// spacing of the text. BPE merges are learned once on the source and
// target training sentences together (a joint vocabulary) and saved with
// BPE.WriteFile; the vocabulary is built from the BPE-encoded training
// sentences and saved with Vocab.WriteFile.
//
// Synthetic tasks (NewTask: copy, reverse, sort) produce Examples directly,
// over symbol ids that follow the reserved ids, and keep a fixed held-out
// share of all sources out of training.
//
// The Batcher groups examples into a few length buckets, so only a few
// batch shapes ever occur, and gives every shape a fixed number of rows.
// Its position is a small BatchState that can be saved with a checkpoint
// and restored to resume exactly the same batch sequence.
//
// Randomness always comes from a seed or a *rand.Rand the caller passes;
// files are written atomically; errors about input files name the file
// and the 1-based line.
package data
