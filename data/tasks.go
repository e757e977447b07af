package data

import (
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/pkg/errors"
)

// TaskConfig describes the sequences of a synthetic task.
type TaskConfig struct {
	// Symbols is the number of distinct symbols; symbol k has id
	// NumReserved+k.
	Symbols int
	// MinLen and MaxLen bound the source length, drawn uniformly from
	// [MinLen, MaxLen].
	MinLen, MaxLen int
}

// taskKind is a synthetic task: a name and how a target follows from its
// source.
type taskKind struct {
	name   string
	target func(src []int) []int
}

// taskKinds lists the synthetic tasks.
var taskKinds = []taskKind{
	{"copy", slices.Clone[[]int]},
	{"reverse", func(src []int) []int { t := slices.Clone(src); slices.Reverse(t); return t }},
	{"sort", func(src []int) []int { t := slices.Clone(src); slices.Sort(t); return t }},
}

// TaskNames returns the names NewTask accepts.
func TaskNames() []string {
	names := make([]string, len(taskKinds))
	for i, k := range taskKinds {
		names[i] = k.name
	}
	return names
}

// Task generates examples of a synthetic sequence task: "copy" (the target
// is the source), "reverse" (the source reversed) or "sort" (the source
// sorted ascending). A source is drawn uniformly: a length from
// [MinLen, MaxLen], then each symbol independently.
//
// About one in 16 of all possible sources is held out, decided by a hash of
// the source alone (see IsHeldOut). Sample never returns a held-out source
// and HeldOut returns only held-out ones, so evaluation examples never
// occur in training, whatever generator Sample is given. Sample redraws
// both length and symbols after drawing a held-out source.
type Task struct {
	kind taskKind
	cfg  TaskConfig
}

// enumerateLimit is the largest number of possible sources that NewTask
// enumerates to check that training and held-out sources both exist.
const enumerateLimit = 1 << 16

// maxTaskLen is the longest source a Task may generate.
const maxTaskLen = 4096

// heldOutSeed seeds the generator behind Task.HeldOut.
const heldOutSeed = 0x5eed_4e1d_0a7a_0001

// NewTask returns the task with the given name (see TaskNames). It is an
// error if cfg allows so few sources that no source, or every source, is
// held out.
func NewTask(name string, cfg TaskConfig) (*Task, error) {
	i := slices.IndexFunc(taskKinds, func(k taskKind) bool { return k.name == name })
	if i < 0 {
		return nil, errors.Errorf("unknown task %q (valid: %s)", name, strings.Join(TaskNames(), ", "))
	}
	if cfg.Symbols < 1 || cfg.MinLen < 1 || cfg.MaxLen < cfg.MinLen || cfg.MaxLen > maxTaskLen {
		return nil, errors.Errorf("task %s: want Symbols >= 1 and 1 <= MinLen <= MaxLen <= %d, got %+v",
			name, maxTaskLen, cfg)
	}
	t := &Task{kind: taskKinds[i], cfg: cfg}
	if err := t.checkSplit(); err != nil {
		return nil, errors.Wrapf(err, "task %s %+v", name, cfg)
	}
	return t, nil
}

// Name returns the name of the task.
func (t *Task) Name() string { return t.kind.name }

// Config returns the configuration of the task.
func (t *Task) Config() TaskConfig { return t.cfg }

// VocabSize returns the number of ids the task uses: the reserved ids and
// the symbols.
func (t *Task) VocabSize() int { return NumReserved + t.cfg.Symbols }

// Sample draws a training example from rng; its source is never held out.
func (t *Task) Sample(rng *rand.Rand) Example {
	for {
		if src := t.draw(rng); !IsHeldOut(src) {
			return t.example(src)
		}
	}
}

// HeldOut returns the first n examples of the task's held-out stream. The
// stream is fixed: HeldOut(n) is a prefix of HeldOut(m) for n <= m.
// Sources may repeat when the task has few of them.
func (t *Task) HeldOut(n int) []Example {
	rng := rand.New(rand.NewPCG(heldOutSeed, heldOutSeed))
	out := make([]Example, 0, max(n, 0))
	for len(out) < n {
		if src := t.draw(rng); IsHeldOut(src) {
			out = append(out, t.example(src))
		}
	}
	return out
}

// draw returns a source drawn uniformly as the Task documentation says.
func (t *Task) draw(rng *rand.Rand) []int {
	src := make([]int, t.cfg.MinLen+rng.IntN(t.cfg.MaxLen-t.cfg.MinLen+1))
	for i := range src {
		src[i] = NumReserved + rng.IntN(t.cfg.Symbols)
	}
	return src
}

// example pairs src with its target.
func (t *Task) example(src []int) Example {
	return Example{Src: src, Tgt: t.kind.target(src)}
}
