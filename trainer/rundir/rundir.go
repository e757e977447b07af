// Package rundir owns a training run's output directory: its layout, its
// lock, and the rules that keep a run from being lost.
//
//   - A new run needs a directory that is missing or empty (but for a lock
//     and stale temporary files). A directory holding any file a run writes
//     is refused unless the caller asks to overwrite it, and even then
//     nothing is removed until the caller has checked the new run's
//     settings and inputs and calls Clear; then only the run's own files
//     are removed.
//   - A resumed run needs the directory of a run.
//   - One process at a time: the directory is locked (a lock on OUT/.lock)
//     for as long as the Dir is open, and a second process is refused.
//   - Temporary files of atomic writes that a killed process left behind
//     are removed when the directory is opened.
//   - A process writes only into the directory it locked: Check refuses
//     once the path names another (the directory was renamed or removed).
package rundir

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/internal/atomicfile"
)

// The files and directories of a run, relative to its directory.
const (
	Settings    = "run.json"          // the run's settings, which a resume reads
	Config      = "config.json"       // the model's config
	Metrics     = "metrics.jsonl"     // one line per evaluation
	Checkpoints = "checkpoints"       // step checkpoints and their states
	Best        = "best.safetensors"  // the best weights so far
	Final       = "final.safetensors" // the weights at the end
	Averaged    = "averaged.safetensors"
	Plot        = "loss.png"
	BPE         = "bpe.txt"
	Vocab       = "vocab.txt"
	Lock        = ".lock"
)

// SentencePiece is the SentencePiece model of a run on one, in place of
// BPE and Vocab.
const SentencePiece = "spm.model"

// layout lists the names a run writes in its directory.
var layout = []string{Settings, Config, Metrics, Checkpoints, Best, Final, Averaged, Plot, BPE, Vocab, SentencePiece, Lock}

// Dir is an open, locked run directory.
type Dir struct {
	path string
	lock *os.File
	// made is the topmost directory Create made (path or a parent of
	// it), "" if none; cleared is set once Clear ran: the directories made
	// for a run that failed before it wrote anything are removed again
	// by Close.
	made    string
	cleared bool
}

// Create opens path for a new run, creating it if needed. A path inside
// another run's directory (its checkpoints/ too, and one whose run is
// still starting: locked, without run.json yet) is refused, whatever
// overwrite says: that run would take the new one's files for its own. A
// directory that holds any of a run's files is refused unless overwrite; Create itself
// removes nothing: Clear removes the old run's files once the new run is
// checked. Files that are not a run's are never removed, and their
// presence is an error.
func Create(path string, overwrite bool) (*Dir, error) {
	if run, err := enclosingRun(path); err != nil || run != "" {
		if err == nil {
			err = errors.Errorf("%s is inside the run directory %s: a run's directory may not lie inside another run's; choose another -out", path, run)
		}
		return nil, err
	}
	made := missing(path)
	if err := os.MkdirAll(path, 0o755); err != nil {
		removeMade(path, made)
		return nil, errors.Wrap(err, "run directory")
	}
	if err := checkForeign(path); err != nil {
		return nil, err
	}
	d, err := open(path)
	if err != nil {
		removeMade(path, made)
		return nil, err
	}
	d.made = made
	if overwrite {
		return d, nil
	}
	if IsRun(path) {
		d.Close()
		return nil, errors.Errorf("%s holds a run: continue it with -resume %s, or start over with -overwrite", path, path)
	}
	if name := runFile(path); name != "" {
		d.Close()
		return nil, errors.Errorf("%s holds %s, a run's file, but no %s: start over with -overwrite, or choose another -out", path, name, Settings)
	}
	return d, nil
}

// missing is the topmost of path and its parents that does not exist,
// or "" if path exists.
func missing(path string) string {
	top := ""
	for p := filepath.Clean(path); ; p = filepath.Dir(p) {
		if _, err := os.Lstat(p); err == nil || !os.IsNotExist(err) {
			return top
		}
		top = p
		if p == filepath.Dir(p) {
			return top
		}
	}
}

// removeMade removes path and its parents up to made (the directories
// Create made), as far as they are empty.
func removeMade(path, made string) {
	if made == "" {
		return
	}
	for p := filepath.Clean(path); os.Remove(p) == nil && p != made; p = filepath.Dir(p) {
	}
}

// runFile is the first of a run's files (the lock excepted) in path, or "".
func runFile(path string) string {
	for _, name := range layout {
		if _, err := os.Lstat(filepath.Join(path, name)); err == nil && name != Lock {
			return name
		}
	}
	return ""
}

// Open opens the directory of an earlier run, to resume it.
func Open(path string) (*Dir, error) {
	if !IsRun(path) {
		return nil, errors.Errorf("%s is not a run directory: it has no %s", path, Settings)
	}
	return open(path)
}

// IsRun reports whether path holds a run that has started.
func IsRun(path string) bool {
	st, err := os.Stat(filepath.Join(path, Settings))
	return err == nil && st.Mode().IsRegular()
}

// open locks path and removes stale temporary files.
func open(path string) (*Dir, error) {
	lock, err := lockDir(path)
	if err != nil {
		return nil, err
	}
	d := &Dir{path: path, lock: lock}
	for _, sub := range []string{path, filepath.Join(path, Checkpoints)} {
		if _, err := atomicfile.Clean(sub); err != nil {
			d.Close()
			return nil, err
		}
	}
	return d, nil
}

// checkForeign refuses a directory with files that no run writes, at
// any depth: Clear would remove them. A run's names are files but for
// checkpoints/, which holds step checkpoints alone.
func checkForeign(path string) error {
	entries, err := os.ReadDir(path)
	if err != nil {
		return errors.Wrap(err, "run directory")
	}
	for _, e := range entries {
		name := e.Name()
		switch {
		case atomicfile.IsTemp(name):
		case !slices.Contains(layout, name), e.IsDir() && name != Checkpoints:
			return foreign(path, name)
		case name == Checkpoints && e.IsDir():
			if err := checkCheckpoints(path); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkCheckpoints refuses a checkpoints/ directory holding anything but
// step checkpoints, their states and temporary files of their writes.
func checkCheckpoints(path string) error {
	entries, err := os.ReadDir(filepath.Join(path, Checkpoints))
	if err != nil {
		return errors.Wrap(err, "run directory")
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || !isCheckpointFile(e.Name()) && !atomicfile.IsTemp(e.Name()) {
			return foreign(path, filepath.Join(Checkpoints, e.Name()))
		}
	}
	return nil
}

// isCheckpointFile reports whether name is a step checkpoint's weights
// or state file: step-NNNNNNNN.safetensors or step-NNNNNNNN.state.safetensors.
func isCheckpointFile(name string) bool {
	rest, ok := strings.CutPrefix(name, "step-")
	if !ok || len(rest) < 8 {
		return false
	}
	for _, c := range rest[:8] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return rest[8:] == ".safetensors" || rest[8:] == ".state.safetensors"
}

// foreign is the error for a file name in path that no run writes.
func foreign(path, name string) error {
	return errors.Errorf("%s is not empty and holds %s, which is not a run's: move it away, or choose another -out", path, name)
}

// Check refuses to write once the directory's path no longer names the
// directory locked (renamed, moved or removed while the run used it): a
// write by path would land in another run's directory, or make a new
// one. A nil Dir (a rank that writes nothing) passes.
func (d *Dir) Check() error {
	if d == nil {
		return nil
	}
	st, err := os.Stat(d.Path(Lock))
	if err == nil {
		var lock os.FileInfo
		if lock, err = d.lock.Stat(); err == nil && os.SameFile(st, lock) {
			return nil
		}
	}
	return errors.Errorf("the run directory %s is no longer the one this process locked (it was renamed, moved or removed); stopping without writing to it", d.path)
}

// Clear removes the files of an earlier run, the lock excepted: a new run
// calls it once its settings and inputs are checked, before it writes.
func (d *Dir) Clear() error {
	if err := d.Check(); err != nil {
		return err
	}
	d.cleared = true
	for _, name := range layout {
		if name == Lock {
			continue
		}
		if err := os.RemoveAll(d.Path(name)); err != nil {
			return errors.Wrap(err, "clearing the old run")
		}
	}
	return nil
}

// Path is the path of name (one of the layout's names) in the directory.
func (d *Dir) Path(name string) string { return filepath.Join(d.path, name) }

// Root is the directory's path.
func (d *Dir) Root() string { return d.path }

// Close releases the lock. The directories that Create made for a run
// that never cleared it (it failed before writing) are removed, if they
// hold nothing but the lock. A nil Dir has nothing to release.
func (d *Dir) Close() error {
	if d == nil || d.lock == nil {
		return nil
	}
	same := d.Check() == nil
	err := unlockDir(d.lock)
	d.lock = nil
	if same && d.made != "" && !d.cleared {
		if entries, rerr := os.ReadDir(d.path); rerr == nil && len(entries) == 1 && entries[0].Name() == Lock {
			os.Remove(d.Path(Lock))
			removeMade(d.path, d.made)
		}
	}
	return err
}

// Outside refuses an output path (of flag) that would write into a run: a
// path inside any run directory (one that holds run.json or a run's lock,
// at any depth above the path, symbolic links resolved) or inside one of dirs (a run
// that may not have its run.json yet), or a file that is one of dirs'
// run files under another name (a hard or symbolic link). A command's
// output file could otherwise replace a run's weights.
func Outside(flag, path string, dirs ...string) error {
	if path == "" {
		return nil
	}
	run, err := enclosingRun(path)
	if err != nil {
		return errors.Wrap(err, flag)
	}
	if run != "" {
		return errors.Errorf("%s %s is inside the run directory %s: write it elsewhere", flag, path, run)
	}
	abs, err := resolve(path)
	if err != nil {
		return errors.Wrap(err, flag)
	}
	out, outErr := os.Stat(abs)
	for _, dir := range dirs {
		absDir, err := resolve(dir)
		if err != nil {
			return errors.Wrap(err, flag)
		}
		if rel, err := filepath.Rel(absDir, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return errors.Errorf("%s %s is inside the run directory %s: write it elsewhere", flag, path, dir)
		}
		if outErr != nil {
			continue
		}
		names, _ := filepath.Glob(filepath.Join(absDir, Checkpoints, "*"))
		for _, name := range layout {
			names = append(names, filepath.Join(absDir, name))
		}
		for _, name := range names {
			if st, err := os.Stat(name); err == nil && os.SameFile(st, out) {
				return errors.Errorf("%s %s is the run's file %s: write it elsewhere", flag, path, name)
			}
		}
	}
	return nil
}

// enclosingRun is the nearest directory above path (symbolic links
// resolved) that holds a run: its run.json, or the lock of a run that has
// not written it yet; "" if there is none.
func enclosingRun(path string) (string, error) {
	abs, err := resolve(path)
	if err != nil {
		return "", err
	}
	for d := filepath.Dir(abs); ; d = filepath.Dir(d) {
		if st, err := os.Lstat(filepath.Join(d, Lock)); IsRun(d) || err == nil && st.Mode().IsRegular() {
			return d, nil
		}
		if d == filepath.Dir(d) {
			return "", nil
		}
	}
}

// resolve makes path absolute with its symbolic links resolved, as far as
// it exists (the missing tail is kept as it is).
func resolve(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	rest := ""
	for {
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			return filepath.Join(real, rest), nil
		}
		parent := filepath.Dir(abs)
		if parent == abs {
			return filepath.Join(abs, rest), nil
		}
		rest = filepath.Join(filepath.Base(abs), rest)
		abs = parent
	}
}

// NotInput refuses an output path (of flag) that is the same file as one
// of inputs (flag names and paths, in pairs), under any name: a command
// would truncate its own input, the user's data, before reading it.
func NotInput(flag, path string, inputs ...string) error {
	if path == "" {
		return nil
	}
	out, err := os.Stat(path)
	if err != nil {
		return nil // a new file is no input
	}
	for i := 0; i+1 < len(inputs); i += 2 {
		if inputs[i+1] == "" {
			continue
		}
		if st, err := os.Stat(inputs[i+1]); err == nil && os.SameFile(st, out) {
			return errors.Errorf("%s %s is the file of %s %s: write it elsewhere", flag, path, inputs[i], inputs[i+1])
		}
	}
	return nil
}
