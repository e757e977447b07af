package trainer

import (
	"bytes"
	"encoding/json"
	"io"
	"os"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/internal/atomicfile"
)

// Metrics is one evaluation, a line of OUT/metrics.jsonl; or, with
// Options.LogEvery, the loss of one update (StepLoss), on a line of its
// own that holds only Step, StepLoss and LR.
type Metrics struct {
	Step      int     `json:"step"`
	TrainLoss float64 `json:"train_loss"` // mean label-smoothed loss since the last evaluation
	ValLoss   float64 `json:"val_loss"`   // mean negative log-likelihood per target token
	ValPPL    float64 `json:"val_ppl"`    // exp(val_loss)
	ValAcc    float64 `json:"val_acc"`    // fraction of target tokens predicted right
	LR        float64 `json:"lr"`
	// TokensPerS is target tokens trained on per second since the last evaluation.
	TokensPerS float64 `json:"tokens_per_s"`
	ElapsedS   float64 `json:"elapsed_s"` // training time so far, across resumed runs
	// ExactMatch is the fraction of held-out synthetic examples whose greedy
	// decode equals the target.
	ExactMatch *float64 `json:"exact_match,omitempty"`
	// BLEU is the corpus BLEU (sacreBLEU's default, 0 to 100) of the
	// validation sample's translations, at the evaluations that compute it.
	BLEU *float64 `json:"bleu,omitempty"`
	// StepLoss, on a line of Options.LogEvery, is the label-smoothed
	// training loss of the update Step alone; nil on an evaluation's line.
	StepLoss *float64 `json:"step_loss,omitempty"`
}

// IsEvaluation reports whether m is an evaluation's line, not a step's
// (Options.LogEvery).
func (m Metrics) IsEvaluation() bool { return m.StepLoss == nil }

// stepLine is a line of metrics.jsonl that Options.LogEvery asks for.
type stepLine struct {
	Step     int     `json:"step"`
	StepLoss float64 `json:"step_loss"`
	LR       float64 `json:"lr"`
}

// appendMetrics appends m (a Metrics or a stepLine) to the JSON-lines
// file at path and syncs it, so a line that was reported is on disk.
func appendMetrics(path string, m any) error {
	line, err := json.Marshal(m)
	if err != nil {
		return errors.Wrap(err, "encoding metrics")
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return errors.Wrap(err, "metrics")
	}
	_, err = f.Write(append(line, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return errors.Wrapf(err, "writing %s", path)
}

// MaxMetricsBytes bounds a metrics.jsonl file (a run evaluating at each of
// a million updates writes about 250 MB), so that reading a device or a
// huge sparse file in its place takes bounded memory.
const MaxMetricsBytes = 1 << 30

// readBounded reads the regular file path, of at most max bytes: a device,
// a directory or a larger file is refused before anything is read.
func readBounded(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	switch {
	case !st.Mode().IsRegular():
		return nil, errors.Errorf("%s is not a regular file", path)
	case st.Size() > max:
		return nil, errors.Errorf("%s has %d bytes, more than the %d a run's metrics may have", path, st.Size(), max)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err == nil && int64(len(data)) > max {
		err = errors.Errorf("%s has more than the %d bytes a run's metrics may have", path, max)
	}
	return data, err
}

// ReadMetrics reads a metrics.jsonl file; a missing file has no metrics.
func ReadMetrics(path string) ([]Metrics, error) {
	ms, _, err := readMetrics(path, false)
	return ms, err
}

// readMetrics reads the metrics of path. With repair, a last line that is
// incomplete (a kill during its append) is dropped and reported as torn;
// any other bad line is an error naming it.
func readMetrics(path string, repair bool) (ms []Metrics, torn bool, err error) {
	data, err := readBounded(path, MaxMetricsBytes)
	if os.IsNotExist(errors.Cause(err)) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, errors.Wrap(err, "metrics")
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	for i, line := range lines {
		if len(line) == 0 {
			continue
		}
		var m Metrics
		err := json.Unmarshal(line, &m)
		last := i == len(lines)-1 || i == len(lines)-2 && len(lines[i+1]) == 0
		if repair && last && (err != nil || !bytes.HasSuffix(line, []byte("\n"))) {
			return ms, true, nil
		}
		if err != nil {
			return nil, false, errors.Wrapf(err, "%s:%d", path, i+1)
		}
		ms = append(ms, m)
	}
	return ms, false, nil
}

// truncateMetrics keeps the metrics of steps up to step, so that a resumed
// run does not repeat what the interrupted one logged after its checkpoint,
// and drops a torn last line. It reports whether a line was torn.
func truncateMetrics(path string, step int) (torn bool, err error) {
	ms, torn, err := readMetrics(path, true)
	if err != nil || len(ms) == 0 && !torn {
		return torn, err
	}
	data, err := readBounded(path, MaxMetricsBytes)
	if err != nil {
		return torn, errors.Wrap(err, "metrics")
	}
	// The lines as they were, in readMetrics's order (one per Metrics).
	var buf bytes.Buffer
	lines := bytes.SplitAfter(data, []byte("\n"))
	i := 0
	for _, line := range lines {
		if len(line) == 0 {
			continue
		}
		if i == len(ms) {
			break // the torn last line
		}
		if ms[i].Step <= step {
			buf.Write(line)
		}
		i++
	}
	return torn, atomicfile.WriteBytes(path, buf.Bytes())
}
