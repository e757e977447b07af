// Package trainer trains a model of any kind: Adam with the paper's warmup
// and inverse-square-root learning rate, label-smoothed loss (in the
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
// generates. New refuses data the model's kind cannot be evaluated on.
package trainer
