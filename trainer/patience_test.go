package trainer

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// TestPatienceStopsWhereTheMetricsSay trains with an evaluation per update
// and Patience 2, and checks that the run stopped at the first evaluation
// that followed two without a new lowest validation loss, as its own
// metrics.jsonl says, before Options.Steps; that it wrote its final
// weights and said why; and that a run interrupted before that point and
// resumed stops at the same step with the same weights, metrics and
// checkpoints.
func TestPatienceStopsWhereTheMetricsSay(t *testing.T) {
	const steps = 60
	opt := options("", steps)
	opt.EvalEvery, opt.SaveEvery, opt.Patience, opt.KeepLast = 1, 4, 2, 50
	opt.OutDir = t.TempDir()
	whole := newFixture(t)
	tr, err := New(whole.m, whole.params, whole.data, opt, Quiet)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	stop := expectedStop(t, opt.OutDir, opt.Patience)
	if stop == 0 || stop >= steps {
		t.Fatalf("the validation loss of metrics.jsonl never stalled for %d evaluations before step %d: pick a run that does", opt.Patience, steps)
	}
	if tr.Step() != stop || !strings.Contains(tr.Stopped(), "step "+strconv.Itoa(stop)) {
		t.Fatalf("stopped at step %d (%q), want %d, where the metrics stalled", tr.Step(), tr.Stopped(), stop)
	}
	if _, err := os.Stat(filepath.Join(opt.OutDir, "final.safetensors")); err != nil {
		t.Fatal(err)
	}
	wholeDir := opt.OutDir
	resumeStopped(t, opt, stop)
	opt.OutDir = t.TempDir()
	interruptedRunWith(t, opt, stop-1) // one evaluation without improvement behind it
	second, tr2 := resumedRunWith(t, opt)
	if tr2.Stopped() != tr.Stopped() {
		t.Errorf("resumed run: %q, want %q", tr2.Stopped(), tr.Stopped())
	}
	assertSameWeights(t, whole, second)
	if got, want := losses(t, opt.OutDir), losses(t, wholeDir); !reflect.DeepEqual(got, want) {
		t.Errorf("metrics of the resumed run differ:\n%v\n%v", got, want)
	}
	for _, f := range []string{"final.safetensors", filepath.Join("checkpoints", "step-"+pad8(stop)+".safetensors")} {
		a, errA := os.ReadFile(filepath.Join(wholeDir, f))
		b, errB := os.ReadFile(filepath.Join(opt.OutDir, f))
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			t.Errorf("%s differs between the run never stopped and the resumed one (%v, %v)", f, errA, errB)
		}
	}
}

// started records whether a run reported its start, which it does when
// it has steps to train.
type started struct {
	quiet
	at *int
}

func (s started) Start(step, _ int) { *s.at = step }

// resumeStopped resumes the run in opt.OutDir, which stopped early at
// step stop: it trains nothing and does not say it trains (issue 50: the
// log said "training from_step=100 to_step=200"), says that it had
// stopped, and writes the final weights again, the same bytes.
func resumeStopped(t *testing.T, opt Options, stop int) {
	t.Helper()
	final := filepath.Join(opt.OutDir, "final.safetensors")
	want, err := os.ReadFile(final)
	if err != nil {
		t.Fatal(err)
	}
	start := -1
	_, tr := resumedRunReporting(t, opt, started{at: &start})
	if start != -1 || tr.Step() != stop || !strings.Contains(tr.Stopped(), "step "+strconv.Itoa(stop)) || !strings.Contains(tr.Stopped(), "before this resume") {
		t.Errorf("resuming the stopped run: reported a start at step %d, ended at step %d, %q; want no start, step %d, and why", start, tr.Step(), tr.Stopped(), stop)
	}
	if got, err := os.ReadFile(final); err != nil || !bytes.Equal(got, want) {
		t.Errorf("resuming the stopped run changed final.safetensors (%v)", err)
	}
}

// expectedStop is the step of the first evaluation of dir/metrics.jsonl
// that follows patience evaluations in a row without a new lowest
// validation loss (counting itself), 0 if there is none.
func expectedStop(t *testing.T, dir string, patience int) int {
	t.Helper()
	ms, err := ReadMetrics(filepath.Join(dir, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	best, stale := 0.0, 0
	for i, m := range ms {
		switch {
		case !m.IsEvaluation():
			continue
		case i == 0 || m.ValLoss < best:
			best, stale = m.ValLoss, 0
		default:
			stale++
		}
		if stale >= patience {
			if i != len(ms)-1 {
				t.Errorf("metrics go on after step %d, where the run should have stopped", m.Step)
			}
			return m.Step
		}
	}
	return 0
}

// pad8 is n in eight digits, as checkpoint names have it.
func pad8(n int) string {
	s := strconv.Itoa(n)
	return strings.Repeat("0", 8-len(s)) + s
}

// TestPatienceNeedsEvaluationsToStop: a Patience that the run's
// evaluations leave no room to stop early (one evaluation, or fewer than
// Patience+2) is refused, naming the evaluations; one that can stop is
// taken.
func TestPatienceNeedsEvaluationsToStop(t *testing.T) {
	for _, c := range []struct {
		steps, every, patience int
		want                   string // "" for no error
	}{
		{10, 10, 1, "Patience 1 has no effect: with Steps 10 and EvalEvery 10 the run evaluates once, and stopping early needs 3 evaluations"},
		{100, 200, 5, "the run evaluates once"},
		{10, 4, 2, "the run evaluates 3 times, and stopping early needs 4 evaluations"},
		{10, 3, 2, ""}, {60, 1, 2, ""},
	} {
		opt := options(t.TempDir(), c.steps)
		opt.EvalEvery, opt.Patience = c.every, c.patience
		err := opt.Validate()
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("steps %d, every %d, patience %d: %v, want %q", c.steps, c.every, c.patience, err, c.want)
		}
	}
}

// TestPatienceMustNotBeNegative checks Validate's word on it.
func TestPatienceMustNotBeNegative(t *testing.T) {
	opt := options(t.TempDir(), 10)
	opt.Patience = -1
	if err := opt.Validate(); err == nil || !strings.Contains(err.Error(), "Patience") {
		t.Errorf("Patience -1: %v", err)
	}
}
