// Package model assembles the Transformer of "Attention Is All You Need"
// (Vaswani et al., 2017) and its variants from package layers, and runs
// them: parameters, compiled training and evaluation programs, checkpoints,
// scoring, and the steps that package model/decode runs to generate
// incrementally with a key/value cache.
//
// # Model kinds
//
// A Config describes a model: its Kind, its sizes, and the names of its
// sublayer variants (Attention, FFN, Norm, Positions) in a
// layers.Registry. One network, Transformer, serves every kind: its
// encoder and decoder stacks are parts a kind has or lacks. FromConfig
// builds the model of any kind from a config and a registry; New,
// NewDecoderOnly and NewEncoderOnly build one kind each with the built-in
// variants.
//
//	kind             parts               what it models                        generates
//	encoder-decoder  encoder, decoder    targets given sources (translation)   yes: decode.New, from sources
//	decoder-only     decoder             the target side alone (a language     yes: decode.New, continuing prompts
//	                                     model), under a causal mask
//	encoder-only     encoder             a target token at every source        no: Tag, a token at every
//	                                     position (tagging, the copy task)     source position
//
// Every kind ties its output projection to the embedding "embed.weight"
// [vocab, dModel]. Its other parameters (see Summary) are, with i the layer:
//
//	encoder-decoder  encoder.layers.i.{self_attn, norm1, feed_forward, norm2}.*
//	                 decoder.layers.i.{self_attn, norm1, cross_attn, norm2, feed_forward, norm3}.*
//	decoder-only     decoder.layers.i.{self_attn, norm1, feed_forward, norm2}.*
//	encoder-only     encoder.layers.i.{self_attn, norm1, feed_forward, norm2}.*
//
// plus, for each stack, "encoder.norm.*" or "decoder.norm.*" when
// Config.PreNorm, and "encoder.pos.weight" or "decoder.pos.weight"
// [MaxLen, dModel] with learned positions.
//
// # Inputs and outputs
//
// Build adds a model's graph inputs for a batch of Shape{Batch: B, SrcLen:
// S, TgtLen: T}, and Feed (the package function, or each model's method)
// sets them from a Batch. float is the graph's element type (the
// parameters' dtype, float32 or float64); int is tensor.Int.
//
//	input (constant)     dtype  shape   holds                               kinds
//	src (InputSrc)       int    [B, S]  Batch.Src: x1 … xm EOS, padded      encoder-decoder, encoder-only
//	tgt_in (InputTgtIn)  int    [B, T]  Batch.TgtIn: BOS y1 … yn, padded    encoder-decoder, decoder-only
//	tgt_out (InputTgtOut) int   [B, T]  Batch.TgtOut: y1 … yn EOS, padded   every kind
//
// The attention masks are made from the ids in the graph: ops.PaddingMask
// of src, [B, 1, 1, S], and ops.CausalMask of tgt_in, [B, 1, T, T].
//
// An encoder-only model needs S = T: it predicts tgt_out[b, j] at source
// position j. Padding is PadID; targets equal to PadID count in no loss.
//
// Build returns the loss, a float scalar: the label-smoothed
// cross-entropy (Config.LabelSmoothing) averaged over the targets that are
// not padding; and, in an evaluation graph only, the log-probabilities
// float [B, T, vocab], log p(tgt_out[b, t] = v | …) (see Output).
// CompileTrain, CompileEval and CompileScore compile the programs of
// training, evaluation and scoring, and name their outputs.
//
// # Generating
//
// Package model/decode runs a Generator (an encoder-decoder, a decoder-only
// model, or a model of one's own) one position at a time against a cache
// of the earlier positions' keys and values: its Decoder calls the
// model's Prefix and Step, on a Step (NewStep) that carries the caches,
// and the Encode of a SourceEncoder, never switching on its type; a
// model's Layout says how it reads batches, for the trainer and scoring.
// Decode takes sources: for an encoder-decoder, sentences x1 … xm EOS; for
// a decoder-only model, prompts (ids without BOS, possibly none) whose
// continuations it returns. A decoder-only model trained on joined
// examples (data.BatchConfig.Join: BOS x1 … xm EOS y1 … yn EOS) continues
// the prompt x1 … xm EOS with its y1 … yn.
//
// An encoder-only model does not generate: Tag predicts the most probable
// target token at every source position.
//
// # Checkpoints
//
// Package model/checkpoint writes the parameters and the config (kind,
// variants, options) to a safetensors file (checkpoint.Save) and rebuilds
// the model of whatever kind from it (checkpoint.Load, with Rebuild), its
// variants looked up in the registry it is given, a program's own included.
//
// # Memory
//
// Footprint estimates the memory of a model from the parameters it
// declares; CheckMemory, decoding, scoring and tagging check their
// estimates against the memory of the graph.Runtime they run on
// (graph.MemoryLimit) before any work.
package model
