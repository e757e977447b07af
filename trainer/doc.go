// Package trainer trains a model of any kind: Adam with the paper's warmup
// and inverse-square-root learning rate (optionally cooled down linearly at
// the end of a run), label-smoothed loss (in the
// model's graph), gradient accumulation and clipping, evaluation, metrics in
// metrics.jsonl, checkpoints that resume a run exactly, and checkpoint
// averaging.
//
// Evaluation is the model kind's: every kind gets the validation loss,
// perplexity and token accuracy; held-out examples are checked for exact
// match by greedy decoding with an encoder-decoder (the source) or a
// decoder-only model (continuing the prompt "source EOS", as joined
// batches train it), and by the most probable token at every position with
// an encoder-only model; a BLEU sample is translated by a model that
// generates. New refuses data the model's kind cannot be trained or
// evaluated on: batches laid out for another kind (joined batches,
// data.BatchConfig.Join, have no sources and are for a decoder-only model,
// which needs them to learn to continue the prompts of held-out examples
// and BLEU samples), and held-out examples or a BLEU sample for a model
// that cannot decode (model.Generates).
package trainer
