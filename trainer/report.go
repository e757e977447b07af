package trainer

import (
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"strconv"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// StepInfo describes the update just made.
type StepInfo struct {
	Step, Total int
	// Loss is the mean training loss since the last evaluation.
	Loss, LR, TokensPerS float64
	// StepLoss is the loss of this update alone, and Logged says that
	// Options.LogEvery asks for it to be logged.
	StepLoss float64
	Logged   bool
}

// Reporter shows a run's progress. NewReporter, NewBarReporter and
// NewLogReporter make the ones cmd/train shows; Quiet shows nothing.
type Reporter interface {
	// Start is called once with the first step (non-zero when resuming) and
	// the last.
	Start(step, total int)
	Step(StepInfo)
	Eval(Metrics)
	// Saved is called with each checkpoint written.
	Saved(step int, path string)
}

// Quiet reports nothing.
var Quiet Reporter = quiet{}

type quiet struct{}

func (quiet) Start(int, int)    {}
func (quiet) Step(StepInfo)     {}
func (quiet) Eval(Metrics)      {}
func (quiet) Saved(int, string) {}

// NewReporter shows progress as a bar on w when w is a terminal, and as
// log lines (NewLogReporter) otherwise: CI, pipes, files. Evaluations are
// logged with log; a nil log is one writing text lines to w.
func NewReporter(w io.Writer, log *slog.Logger) Reporter {
	if log == nil {
		log = slog.New(slog.NewTextHandler(w, nil))
	}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return NewBarReporter(w, log)
	}
	return NewLogReporter(log, DefaultLogEvery)
}

// NewBarReporter draws a progress bar on w (step, loss, learning rate,
// tokens/s and the time left) and logs each evaluation with log, clearing
// the bar first.
func NewBarReporter(w io.Writer, log *slog.Logger) Reporter {
	return &barReporter{w: w, log: log}
}

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

func (r *barReporter) Step(s StepInfo) {
	if s.Logged {
		r.bar.Clear()
		logStep(r.log, s)
	}
	r.bar.Describe(fmt.Sprintf("loss %.3f  lr %.2e  %.0f tok/s", s.Loss, s.LR, s.TokensPerS))
	r.bar.Set(s.Step)
}

func (r *barReporter) Eval(m Metrics) {
	r.bar.Clear()
	logEval(r.log, m)
}

func (r *barReporter) Saved(int, string) {}

// DefaultLogEvery is how often, in updates, NewReporter's log lines report
// a step.
const DefaultLogEvery = 50

// NewLogReporter writes structured log lines (log/slog) with log: the
// start, every every-th step (at least 1), every evaluation and every
// checkpoint, with keys such as step, loss, lr, tokens_per_s, val_loss and
// path.
func NewLogReporter(log *slog.Logger, every int) Reporter {
	return &logReporter{log: log, every: max(every, 1)}
}

type logReporter struct {
	log   *slog.Logger
	every int
}

func (r *logReporter) Start(step, total int) {
	r.log.Info("training", "from_step", step, "to_step", total)
}

func (r *logReporter) Step(s StepInfo) {
	if s.Logged {
		logStep(r.log, s)
	} else if s.Step%r.every == 0 {
		r.log.Info("step", "step", s.Step, "of", s.Total, "loss", round(s.Loss), "lr", significant(s.LR), "tokens_per_s", int(s.TokensPerS))
	}
}

// logStep logs a step that Options.LogEvery asks for, with its own loss.
func logStep(log *slog.Logger, s StepInfo) {
	log.Info("step", "step", s.Step, "of", s.Total, "step_loss", round(s.StepLoss), "loss", round(s.Loss), "lr", significant(s.LR),
		"tokens_per_s", int(s.TokensPerS))
}

func (r *logReporter) Eval(m Metrics) { logEval(r.log, m) }

func (r *logReporter) Saved(step int, path string) {
	r.log.Info("checkpoint", "step", step, "path", path)
}

func logEval(log *slog.Logger, m Metrics) {
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

// round rounds v to 4 decimals for log lines; a value too large for them
// (a perplexity of 1e300) stays as it is, never turned into an infinity.
func round(v float64) float64 {
	if r := math.Round(v*10000) / 10000; !math.IsInf(r, 0) && !math.IsNaN(r) {
		return r
	}
	return v
}

// significant rounds a learning rate to 4 significant digits for log lines:
// 9.882e-05 in the paper's warm-up, where round would print 0.0001. A value
// that would round past the largest float64 stays as it is.
func significant(v float64) float64 {
	if r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 4, 64), 64); err == nil {
		return r
	}
	return v
}
