package trainer

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pkg/errors"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/data"
	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/graph/safetensors"
	"github.com/transformer-go/transformer/model/checkpoint"
)

// A checkpoint of step N is two files in OUT/checkpoints:
//
//	step-0000000N.safetensors        the weights and config (checkpoint.Save), usable alone
//	step-0000000N.state.safetensors  Adam's moments ("m.NAME", "v.NAME") and, in the
//	                                 metadata, the run's state (state)
//
// The state file is written first, so a step whose weights file exists is
// complete. Both writes are atomic.

// state is what, besides weights and moments, resumes a run exactly.
type state struct {
	Step     int             `json:"step"`
	Batcher  data.BatchState `json:"batcher"`
	RNG      string          `json:"rng"` // the dropout generator, base64
	Best     float64         `json:"best_val_loss"`
	ElapsedS float64         `json:"elapsed_s"`
	// Window sums the updates since the last evaluation (none in the
	// state files of older runs).
	Window windowState `json:"window"`
	// Stale counts the evaluations since the best, for Options.Patience
	// (none in the state files of older runs).
	Stale int `json:"stale_evaluations,omitempty"`
}

const stateKey = "trainer_state"

// check refuses a state that is not of the given step or holds values no
// run writes.
func (st state) check(step int) error {
	switch {
	case st.Step != step:
		return errors.Errorf("step %d, but the file is of step %d", st.Step, step)
	case !(st.ElapsedS >= 0) || math.IsInf(st.ElapsedS, 0) || math.IsNaN(st.Best):
		return errors.Errorf("elapsed %v s and best loss %v are not a run's", st.ElapsedS, st.Best)
	case !(st.Window.Loss >= 0) || math.IsInf(st.Window.Loss, 0) || st.Window.Steps < 0 || st.Window.Tokens < 0 || st.Window.Steps > st.Step:
		return errors.Errorf("the loss window (%v over %d updates, %d tokens) is not a run's", st.Window.Loss, st.Window.Steps, st.Window.Tokens)
	case st.Stale < 0 || st.Stale > st.Step:
		return errors.Errorf("%d evaluations since the best in %d updates is not a run's", st.Stale, st.Step)
	}
	return nil
}

// checkpointDir is where step checkpoints go.
func (t *Trainer) checkpointDir() string { return filepath.Join(t.opt.OutDir, "checkpoints") }

// stepPath is the weights file of a step.
func stepPath(dir string, step int) string {
	return filepath.Join(dir, fmt.Sprintf("step-%08d.safetensors", step))
}

// statePath is the state file that goes with a weights file.
func statePath(weights string) string {
	return strings.TrimSuffix(weights, ".safetensors") + ".state.safetensors"
}

// meta is the metadata stored with every weights file.
func (t *Trainer) meta() map[string]string {
	meta := map[string]string{"step": strconv.Itoa(t.adam.Step)}
	for k, v := range t.opt.Meta {
		meta[k] = v
	}
	return meta
}

// save writes the checkpoint of the current step and removes old ones (on
// rank 0; the other ranks write nothing).
func (t *Trainer) save() (string, error) {
	if !t.world().Root() {
		return "", nil
	}
	if err := t.toHost(); err != nil {
		return "", err
	}
	if err := t.checkFinite(); err != nil {
		return "", err
	}
	if err := t.checkDir(); err != nil {
		return "", err
	}
	path, err := t.writeCheckpoint()
	if err != nil {
		return "", t.moved(err)
	}
	t.rep.Saved(t.adam.Step, path)
	return path, t.moved(t.prune())
}

// writeCheckpoint writes the state and weights files of the current step.
func (t *Trainer) writeCheckpoint() (string, error) {
	dir := t.checkpointDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", errors.Wrap(err, "checkpoint directory")
	}
	path := stepPath(dir, t.adam.Step)
	if err := t.saveState(statePath(path)); err != nil {
		return "", err
	}
	return path, checkpoint.Save(path, t.m.Config(), t.params, t.meta())
}

// checkFinite refuses parameters that are not all finite, so that a run
// that diverged stops naming the step, the parameter and the value, and
// never writes weights over its last good checkpoint.
func (t *Trainer) checkFinite() error {
	for _, name := range t.params.Names() {
		if bad := elemsOf(t.params.Dtype()).nonFinite(t.params.Value(name)); bad != 0 {
			return errors.Errorf("step %d: parameter %s holds %v; stopping. %s", t.adam.Step, name, bad, t.lastGood())
		}
	}
	return nil
}

// lastGood names the newest checkpoint, which a run that diverged keeps,
// for its message.
func (t *Trainer) lastGood() string {
	paths, err := Checkpoints(t.opt.OutDir)
	if err != nil || len(paths) == 0 {
		return "No checkpoint was saved before it."
	}
	return "The last good checkpoint is " + paths[len(paths)-1] + "."
}

// saveState writes Adam's moments and the run's state.
func (t *Trainer) saveState(path string) error {
	st, err := t.currentState()
	if err != nil {
		return err
	}
	js, err := json.Marshal(st)
	if err != nil {
		return errors.Wrap(err, "encoding the trainer state")
	}
	m, v := t.adam.Moments()
	var tensors []safetensors.Tensor
	for _, name := range t.params.Names() {
		for prefix, p := range map[string]*graph.Params{"m.": m, "v.": v} {
			ts, err := safetensors.FromDense(prefix+name, p.Value(name))
			if err != nil {
				return err
			}
			tensors = append(tensors, ts)
		}
	}
	return safetensors.Write(path, tensors, map[string]string{stateKey: string(js)})
}

// currentState is the run's state now.
func (t *Trainer) currentState() (state, error) {
	rng, err := t.pcg.MarshalBinary()
	if err != nil {
		return state{}, errors.Wrap(err, "saving the random state")
	}
	best := t.best
	if math.IsInf(best, 1) {
		best = math.MaxFloat64
	}
	return state{
		Step: t.adam.Step, Batcher: t.data.Train.State(), RNG: base64.StdEncoding.EncodeToString(rng),
		Best: best, ElapsedS: (t.elapsed + time.Since(t.window.start)).Seconds(),
		Window: windowState{Loss: t.window.loss, Steps: t.window.steps, Tokens: t.window.tokens},
		Stale:  t.patience.stale,
	}, nil
}

// prune removes the checkpoints off the schedule (an interruption's)
// older than the newest, and step checkpoints beyond the KeepLast most
// recent: the checkpoints kept, and those Average takes, are those of a
// run never interrupted.
func (t *Trainer) prune() error {
	steps, err := checkpointSteps(t.checkpointDir())
	if err != nil {
		return err
	}
	var kept []int
	for i, step := range steps {
		if i < len(steps)-1 && !t.scheduled(step) {
			if err := t.remove(step); err != nil {
				return err
			}
			continue
		}
		kept = append(kept, step)
	}
	for len(kept) > t.opt.KeepLast {
		if err := t.remove(kept[0]); err != nil {
			return err
		}
		kept = kept[1:]
	}
	return nil
}

// scheduled reports whether the run saves a checkpoint at step
// unprompted: every SaveEvery updates, and at the end.
func (t *Trainer) scheduled(step int) bool {
	return step%t.opt.SaveEvery == 0 || step == t.opt.Steps
}

// remove removes the checkpoint of step.
func (t *Trainer) remove(step int) error {
	p := stepPath(t.checkpointDir(), step)
	if err := os.Remove(p); err != nil {
		return errors.Wrap(err, "removing an old checkpoint")
	}
	if err := os.Remove(statePath(p)); err != nil && !os.IsNotExist(err) {
		return errors.Wrap(err, "removing an old checkpoint")
	}
	return nil
}

// checkpointSteps lists the steps with a complete checkpoint in dir, oldest first.
func checkpointSteps(dir string) ([]int, error) {
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, errors.Wrap(err, "listing checkpoints")
	}
	var steps []int
	for _, e := range entries {
		var step int
		if n, _ := fmt.Sscanf(e.Name(), "step-%08d.safetensors", &step); n == 1 && e.Name() == filepath.Base(stepPath(dir, step)) {
			steps = append(steps, step)
		}
	}
	sort.Ints(steps)
	return steps, nil
}

// Checkpoints lists the weights files of dir/checkpoints, oldest first.
func Checkpoints(outDir string) ([]string, error) {
	dir := filepath.Join(outDir, "checkpoints")
	steps, err := checkpointSteps(dir)
	paths := make([]string, len(steps))
	for i, s := range steps {
		paths[i] = stepPath(dir, s)
	}
	return paths, err
}

// Resumed says what Resume restored.
type Resumed struct {
	// Step is the step resumed at, Path the checkpoint's weights file.
	Step int
	Path string
	// Skipped holds why each newer checkpoint could not be resumed, newest
	// first: Resume falls back to the newest one that loads.
	Skipped []error
	// TornMetrics is true when the last line of metrics.jsonl was
	// incomplete (the run was killed while appending it) and was dropped.
	TornMetrics bool
}

// Resume restores the newest checkpoint of dir that loads (an output
// directory of an earlier run with the same data and options). In a
// data-parallel run only rank 0 reads it, and Run gives the other ranks
// its weights and state; the others' Resume does nothing. It restores weights,
// Adam's moments and step, the dropout generator, the data position and the
// best validation loss, so the run continues exactly as if never
// interrupted. Metrics the interrupted run logged after that checkpoint are
// dropped.
func (t *Trainer) Resume(dir string) (Resumed, error) {
	if !t.world().Root() {
		return Resumed{}, nil
	}
	if err := t.checkDir(); err != nil {
		return Resumed{}, err
	}
	paths, err := Checkpoints(dir)
	if err != nil {
		return Resumed{}, err
	}
	if len(paths) == 0 {
		return Resumed{}, errors.Errorf("no checkpoint to resume in %s", filepath.Join(dir, "checkpoints"))
	}
	if last := stepOf(paths[len(paths)-1]); last > t.opt.Steps {
		return Resumed{}, errors.Errorf("%s has a checkpoint of step %d, past this run's last step %d", dir, last, t.opt.Steps)
	}
	var r Resumed
	for i := len(paths) - 1; i >= 0; i-- {
		err := t.restore(paths[i])
		if err == nil {
			r.Step, r.Path = t.adam.Step, paths[i]
			break
		}
		r.Skipped = append(r.Skipped, err)
	}
	if r.Path == "" {
		return r, errors.Errorf("no checkpoint of %s can be resumed; the newest failed with: %v", dir, r.Skipped[0])
	}
	r.TornMetrics, err = truncateMetrics(filepath.Join(t.opt.OutDir, "metrics.jsonl"), t.adam.Step)
	return r, err
}

// restore loads the checkpoint whose weights file is path, and its state.
func (t *Trainer) restore(path string) error {
	ck, err := checkpoint.Read(path)
	if err != nil {
		return err
	}
	if !ck.Config.Equal(t.m.Config()) {
		return errors.Errorf("checkpoint %s is of another model: %+v, this run's is %+v", path, ck.Config, t.m.Config())
	}
	if err := sameFingerprints(t.opt.Meta, ck.Meta); err != nil {
		return errors.Wrapf(err, "checkpoint %s: not the run's bpe.txt and vocab.txt", path)
	}
	if have, ok := ck.Meta[data.DataFingerprintKey]; ok && have != t.opt.Meta[data.DataFingerprintKey] {
		return errors.Errorf("checkpoint %s: the run's training or validation data changed since it was saved (%s differs: its files were edited, or a synthetic task's settings in run.json); resume on the run's own data, or start a new run", path, data.DataFingerprintKey)
	}
	if err := ck.Restore(t.params); err != nil {
		return err
	}
	return t.restoreState(statePath(path), stepOf(path))
}

// stepOf is the step in the name of a weights file.
func stepOf(path string) int {
	var step int
	fmt.Sscanf(filepath.Base(path), "step-%08d.safetensors", &step)
	return step
}

// restoreState reads a state file written by saveState for the given step.
func (t *Trainer) restoreState(path string, step int) error {
	f, err := safetensors.Read(path)
	if err != nil {
		return err
	}
	var st state
	if err := json.Unmarshal([]byte(f.Metadata[stateKey]), &st); err != nil {
		return errors.Wrapf(err, "%s: trainer state", path)
	}
	if err := st.check(step); err != nil {
		return errors.Wrapf(err, "%s: trainer state", path)
	}
	m, v := t.adam.Moments()
	for _, name := range t.params.Names() {
		for prefix, p := range map[string]*graph.Params{"m.": m, "v.": v} {
			d, err := f.Dense(prefix+name, t.params.Dtype())
			if err == nil {
				err = checkMoment(prefix+name, d, prefix == "v.")
			}
			if err == nil {
				err = p.Set(name, d)
			}
			if err != nil {
				return errors.Wrapf(err, "%s", path)
			}
		}
	}
	return errors.Wrapf(t.applyState(st), "%s", path)
}

// checkMoment refuses a moment of Adam that no run writes: a value that is
// not finite, or a negative second moment (whose root is NaN).
func checkMoment(name string, d *tensor.Dense, second bool) error {
	for i, v := range graph.Float64s(d) {
		if math.IsNaN(v) || math.IsInf(v, 0) || second && v < 0 {
			return errors.Errorf("tensor %s holds %v at index %d, which no run writes", name, v, i)
		}
	}
	return nil
}

// applyState makes st the run's state.
func (t *Trainer) applyState(st state) error {
	rng, err := base64.StdEncoding.DecodeString(st.RNG)
	if err == nil {
		err = t.pcg.UnmarshalBinary(rng)
	}
	if err != nil {
		return errors.Wrap(err, "random state")
	}
	if err := t.data.Train.Restore(st.Batcher); err != nil {
		return errors.Wrap(err, "data position")
	}
	t.adam.Step, t.best, t.elapsed = st.Step, st.Best, time.Duration(st.ElapsedS*float64(time.Second))
	t.window = window{loss: st.Window.Loss, steps: st.Window.Steps, tokens: st.Window.Tokens}
	t.patience.stale = st.Stale
	return nil
}

// finish writes the final weights and the loss curves (on rank 0).
func (t *Trainer) finish() error {
	if !t.world().Root() {
		return nil
	}
	if err := t.toHost(); err != nil {
		return err
	}
	if err := t.checkFinite(); err != nil {
		return err
	}
	if err := t.checkDir(); err != nil {
		return err
	}
	if err := checkpoint.Save(filepath.Join(t.opt.OutDir, "final.safetensors"), t.m.Config(), t.params, t.meta()); err != nil {
		return t.moved(err)
	}
	ms, err := ReadMetrics(filepath.Join(t.opt.OutDir, "metrics.jsonl"))
	if err == nil {
		err = t.checkDir()
	}
	if err != nil {
		return err
	}
	return t.moved(PlotRun(ms, t.plotTitle(), filepath.Join(t.opt.OutDir, "loss.png")))
}
