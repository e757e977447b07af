package trainer

import (
	"bytes"
	"log/slog"
	"math"
	"strings"
	"testing"
)

// TestReporters checks what the exported reporters show: log lines with
// the documented keys, a bar on a terminal; and that a writer that is no
// terminal gets log lines.
func TestReporters(t *testing.T) {
	em := 0.75
	run := func(r Reporter) {
		r.Start(0, 4)
		for step := 1; step <= 4; step++ {
			r.Step(StepInfo{Step: step, Total: 4, Loss: 2.5, LR: 9.882117688026186e-05, TokensPerS: 1234})
		}
		r.Eval(Metrics{Step: 4, TrainLoss: 2.5, ValLoss: 2.25, ValPPL: 9.4877, ValAcc: 0.5, ExactMatch: &em})
		r.Saved(4, "out/checkpoints/step-00000004.safetensors")
	}
	var logs bytes.Buffer
	run(NewLogReporter(slog.New(slog.NewTextHandler(&logs, nil)), 2))
	for _, want := range []string{"msg=training from_step=0 to_step=4", "msg=step step=2 of=4 loss=2.5 lr=9.882e-05 tokens_per_s=1234",
		"msg=step step=4", "msg=eval step=4 train_loss=2.5 val_loss=2.25 val_ppl=9.4877 val_acc=0.5 tokens_per_s=0 exact_match=0.75",
		"msg=checkpoint step=4 path=out/checkpoints/step-00000004.safetensors"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lines lack %q:\n%s", want, logs.String())
		}
	}
	if strings.Contains(logs.String(), "step=1 ") || strings.Contains(logs.String(), "step=3 ") {
		t.Errorf("log lines of steps other than every 2nd:\n%s", logs.String())
	}

	var auto bytes.Buffer
	run(NewReporter(&auto, nil))
	if !strings.Contains(auto.String(), "msg=eval step=4") || strings.Contains(auto.String(), "msg=step") {
		t.Errorf("NewReporter on a pipe: want log lines every %d steps:\n%s", DefaultLogEvery, auto.String())
	}

	var bar, barLog bytes.Buffer
	run(NewBarReporter(&bar, slog.New(slog.NewTextHandler(&barLog, nil))))
	if !strings.Contains(bar.String(), "loss 2.500  lr 9.88e-05  1234 tok/s") || !strings.Contains(barLog.String(), "msg=eval step=4") {
		t.Errorf("bar %q, log %q", bar.String(), barLog.String())
	}
}

// TestNilReporterShowsProgress checks that New gives a nil Reporter the
// one NewReporter makes for standard error, and Quiet stays quiet.
func TestNilReporterShowsProgress(t *testing.T) {
	fx := newFixture(t)
	tr, err := New(fx.m, fx.params, fx.data, Options{Steps: 1, OutDir: t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	switch tr.rep.(type) {
	case *logReporter, *barReporter:
	default:
		t.Errorf("a nil Reporter became %T", tr.rep)
	}
	if tr, _ = New(fx.m, fx.params, fx.data, Options{Steps: 1, OutDir: t.TempDir()}, Quiet); tr.rep != Quiet {
		t.Errorf("Quiet became %T", tr.rep)
	}
}

func TestRoundNeverWraps(t *testing.T) {
	for _, tc := range []struct{ in, want float64 }{
		{1.23456, 1.2346}, {-0.00004, 0}, {3e15, 3e15}, {1e300, 1e300}, {math.MaxFloat64, math.MaxFloat64},
	} {
		if got := round(tc.in); got != tc.want {
			t.Errorf("round(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
