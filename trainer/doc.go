// Package trainer trains a model of any kind: Adam or AdamW (decoupled
// weight decay), the paper's warm-up and inverse-square-root learning rate
// or a constant, linear or cosine one (see Schedule), label-smoothed loss
// (in the model's graph), gradient accumulation and clipping, evaluation,
// metrics in metrics.jsonl, checkpoints that resume a run exactly, and
// checkpoint averaging. Progress shows as a bar on a terminal or as
// log/slog lines (NewReporter); package inference loads a finished run's
// directory in one call.
//
// Options needs only Steps and OutDir; its other zero values mean the
// defaults its fields document. New checks every option (reporting all
// the bad ones in one error), the data against the model, and the output
// directory (creating it) before any work:
//
//	opt := trainer.Options{Steps: 1000, OutDir: "runs/x",
//		Optimizer: trainer.OptimizerAdamW, Schedule: trainer.ScheduleCosine, LR: new(5e-4)}
//	t, err := trainer.New(m, params, trainer.Data{Train: batches, Valid: valid}, opt, nil)
//	_, err = t.Resume("runs/x") // only when continuing a run stopped earlier
//	err = t.Run(ctx)
//
// Evaluation is the model kind's: every kind gets the validation loss,
// perplexity and token accuracy; held-out examples are checked for exact
// match by greedy decoding with an encoder-decoder (the source) or a
// decoder-only model (continuing the prompt "source EOS", as joined
// batches train it), and by the most probable token at every position with
// an encoder-only model; a BLEU sample is translated by a model that
// generates. New refuses data the model cannot be trained or evaluated
// on: batches longer than its max_len, batches laid out for another kind
// (joined batches, data.BatchConfig.Join, have no sources and are for a
// decoder-only model, which needs them to learn to continue the prompts of
// held-out examples and BLEU samples), a BLEU sample for a model that
// cannot decode (decode.Generates), and held-out examples for one that
// neither decodes nor is encoder-only.
package trainer
