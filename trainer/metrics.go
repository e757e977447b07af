package trainer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/internal/atomicfile"
)

// Metrics is one evaluation, a line of OUT/metrics.jsonl.
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
}

// appendMetrics appends m to the JSON-lines file at path.
func appendMetrics(path string, m Metrics) error {
	line, err := json.Marshal(m)
	if err != nil {
		return errors.Wrap(err, "encoding metrics")
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return errors.Wrap(err, "metrics")
	}
	_, err = f.Write(append(line, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return errors.Wrapf(err, "writing %s", path)
}

// ReadMetrics reads a metrics.jsonl file; a missing file has no metrics.
func ReadMetrics(path string) ([]Metrics, error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, errors.Wrap(err, "metrics")
	}
	var ms []Metrics
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		var m Metrics
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			return nil, errors.Wrapf(err, "%s:%d", path, line)
		}
		ms = append(ms, m)
	}
	return ms, errors.Wrap(sc.Err(), path)
}

// truncateMetrics keeps the metrics of steps up to step, so that a resumed
// run does not repeat what the interrupted one logged after its checkpoint.
func truncateMetrics(path string, step int) error {
	ms, err := ReadMetrics(path)
	if err != nil || len(ms) == 0 {
		return err
	}
	var buf bytes.Buffer
	for _, m := range ms {
		if m.Step <= step {
			line, _ := json.Marshal(m)
			buf.Write(append(line, '\n'))
		}
	}
	return atomicfile.WriteBytes(path, buf.Bytes())
}
