package main

import (
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/transformer-go/transformer/trainer"
)

// newReporter shows progress as a bar on a terminal and as log lines
// otherwise (CI, pipes).
func newReporter(w io.Writer, log *slog.Logger) trainer.Reporter {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return &barReporter{w: w, log: log}
	}
	return &logReporter{log: log}
}

// barReporter draws a progress bar: step, loss, learning rate, tokens/s and ETA.
type barReporter struct {
	w   io.Writer
	log *slog.Logger
	bar *progressbar.ProgressBar
}

func (r *barReporter) Start(step, total int) {
	r.bar = progressbar.NewOptions(total,
		progressbar.OptionSetWriter(r.w),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionSetWidth(24),
		progressbar.OptionThrottle(200_000_000),
		progressbar.OptionSetDescription("training"),
	)
	r.bar.Set(step)
}

func (r *barReporter) Step(s trainer.StepInfo) {
	r.bar.Describe(fmt.Sprintf("loss %.3f  lr %.2e  %.0f tok/s", s.Loss, s.LR, s.TokensPerS))
	r.bar.Set(s.Step)
}

func (r *barReporter) Eval(m trainer.Metrics) {
	r.bar.Clear()
	logEval(r.log, m)
}

func (r *barReporter) Saved(int, string) {}

// logReporter writes a log line every logEvery steps and at each evaluation.
type logReporter struct {
	log   *slog.Logger
	total int
}

const logEvery = 50

func (r *logReporter) Start(step, total int) {
	r.total = total
	r.log.Info("training", "from_step", step, "to_step", total)
}

func (r *logReporter) Step(s trainer.StepInfo) {
	if s.Step%logEvery == 0 {
		r.log.Info("step", "step", s.Step, "of", s.Total, "loss", round(s.Loss), "lr", s.LR, "tokens_per_s", int(s.TokensPerS))
	}
}

func (r *logReporter) Eval(m trainer.Metrics) { logEval(r.log, m) }

func (r *logReporter) Saved(step int, path string) {
	r.log.Info("checkpoint", "step", step, "path", path)
}

func logEval(log *slog.Logger, m trainer.Metrics) {
	args := []any{"step", m.Step, "train_loss", round(m.TrainLoss), "val_loss", round(m.ValLoss),
		"val_ppl", round(m.ValPPL), "val_acc", round(m.ValAcc), "tokens_per_s", int(m.TokensPerS)}
	if m.ExactMatch != nil {
		args = append(args, "exact_match", round(*m.ExactMatch))
	}
	if m.BLEU != nil {
		args = append(args, "bleu", round(*m.BLEU))
	}
	log.Info("eval", args...)
}

// round rounds v to 4 decimals; a value too large for them (a perplexity
// of 1e300) stays as it is, never wrapped around to a negative number.
func round(v float64) float64 {
	if r := math.Round(v*10000) / 10000; !math.IsInf(r, 0) && !math.IsNaN(r) {
		return r
	}
	return v
}
