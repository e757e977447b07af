// Package trainer trains a model: Adam with the paper's warmup and
// inverse-square-root learning rate, label-smoothed loss (in the model's
// graph), gradient accumulation and clipping, evaluation (validation loss,
// perplexity, token accuracy, exact match of greedy decodes, BLEU of a
// translated validation sample), metrics in
// metrics.jsonl, checkpoints that resume a run exactly, and checkpoint
// averaging.
package trainer
