package rundir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func TestCreate(t *testing.T) {
	tests := []struct {
		name      string
		files     []string // in the directory before Create
		overwrite bool
		want      string // error substring; "" for success
		kept      []string
	}{
		{name: "missing directory"},
		{name: "empty directory", files: []string{}},
		{name: "a lock alone", files: []string{Lock}},
		{name: "checkpoints without run.json", files: []string{"checkpoints/step-00000010.safetensors"}, want: "holds checkpoints, a run's file, but no run.json"},
		{name: "vocabulary without run.json", files: []string{Vocab, Lock}, want: "holds vocab.txt"},
		{name: "SentencePiece model without run.json", files: []string{SentencePiece}, want: "holds spm.model"},
		{name: "a run", files: []string{Settings, Metrics, "checkpoints/step-00000010.safetensors"}, want: "holds a run: continue it with -resume"},
		{name: "a run, overwritten", files: []string{Settings, Metrics, Final, "checkpoints/step-00000010.safetensors"}, overwrite: true},
		{name: "foreign file", files: []string{"thesis.tex"}, overwrite: true, want: "holds thesis.tex, which is not a run's", kept: []string{"thesis.tex"}},
		{name: "stale temporary", files: []string{".run.json.tmp-42"}},
		// Clear would remove what is inside checkpoints/ too: no file there is
		// a user's.
		{name: "notes in checkpoints", files: []string{Settings, "checkpoints/step-00000010.safetensors", "checkpoints/notes.txt"}, overwrite: true,
			want: "holds checkpoints/notes.txt, which is not a run's"},
		{name: "weights of one's own in checkpoints", files: []string{Settings, "checkpoints/keep-this.safetensors"}, overwrite: true,
			want: "holds checkpoints/keep-this.safetensors, which is not a run's"},
		{name: "a directory in checkpoints", files: []string{Settings, "checkpoints/old/step-00000010.safetensors"}, overwrite: true,
			want: "holds checkpoints/old, which is not a run's"},
		{name: "a directory under a run file's name", files: []string{Settings, "final.safetensors/thesis.tex"}, overwrite: true,
			want: "holds final.safetensors, which is not a run's"},
		{name: "a run's checkpoints and their states", files: []string{Settings, "checkpoints/step-00000010.safetensors",
			"checkpoints/step-00000010.state.safetensors"}, overwrite: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			if tt.files != nil {
				os.MkdirAll(dir, 0o755)
			}
			for _, f := range tt.files {
				write(t, filepath.Join(dir, f))
			}
			d, err := Create(dir, tt.overwrite)
			if tt.want != "" {
				if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), dir) {
					t.Fatalf("error %v, want one naming %s with %q", err, dir, tt.want)
				}
				for _, f := range tt.files {
					if !exists(filepath.Join(dir, f)) {
						t.Errorf("refused Create removed %s", f)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			for _, f := range tt.files {
				if !exists(filepath.Join(dir, f)) && !strings.HasPrefix(f, ".run") {
					t.Errorf("Create removed %s before Clear", f)
				}
			}
			if err := d.Clear(); err != nil {
				t.Fatal(err)
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 1 || entries[0].Name() != Lock {
				t.Errorf("new run directory holds %v, want only the lock", entries)
			}
		})
	}
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "not a run directory") {
		t.Fatalf("Open of an empty directory: %v", err)
	}
	write(t, filepath.Join(dir, Settings))
	write(t, filepath.Join(dir, Checkpoints, ".step-00000010.safetensors.tmp-77"))
	write(t, filepath.Join(dir, Checkpoints, "step-00000005.safetensors"))
	d, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if exists(filepath.Join(dir, Checkpoints, ".step-00000010.safetensors.tmp-77")) {
		t.Error("Open left a stale temporary file")
	}
	if !exists(filepath.Join(dir, Checkpoints, "step-00000005.safetensors")) || !exists(d.Path(Settings)) {
		t.Error("Open removed a run's file")
	}
}

func TestOneProcessAtATime(t *testing.T) {
	dir := t.TempDir()
	d, err := Create(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	write(t, d.Path(Settings))
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "in use by another run") {
		t.Fatalf("second Open while locked: %v", err)
	}
	if _, err := Create(dir, true); err == nil || !strings.Contains(err.Error(), "in use by another run") {
		t.Fatalf("overwrite while locked: %v", err)
	}
	if !exists(d.Path(Settings)) {
		t.Fatal("a refused overwrite removed the locked run's files")
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d2, err := Open(dir)
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	d2.Close()
}

// TestCloseRemovesWhatCreateMade closes a new directory before its run
// wrote anything: Close removes it; a directory that existed, or one a run
// cleared, stays.
func TestCloseRemovesWhatCreateMade(t *testing.T) {
	made := filepath.Join(t.TempDir(), "new")
	d, err := Create(made, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if exists(made) {
		t.Error("Close left the directory of a run that wrote nothing")
	}
	existing := t.TempDir()
	if d, err = Create(existing, false); err != nil {
		t.Fatal(err)
	}
	d.Close()
	if !exists(existing) {
		t.Error("Close removed a directory it did not make")
	}
	cleared := filepath.Join(t.TempDir(), "cleared")
	if d, err = Create(cleared, false); err != nil {
		t.Fatal(err)
	}
	if err := d.Clear(); err != nil {
		t.Fatal(err)
	}
	d.Close()
	if !exists(cleared) {
		t.Error("Close removed the directory of a run that started")
	}
}

func TestOutside(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "run")
	write(t, filepath.Join(run, Settings))
	write(t, filepath.Join(run, Final))
	write(t, filepath.Join(run, Checkpoints, "step-00000002.safetensors"))
	if err := os.Link(filepath.Join(run, Final), filepath.Join(dir, "hard.png")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(run, Final), filepath.Join(dir, "soft.png")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(run, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	newRun := filepath.Join(dir, "new") // a run without its run.json yet
	for _, c := range []struct {
		path string
		dirs []string
		want string // "" for no error
	}{
		{filepath.Join(dir, "a.png"), []string{run}, ""},
		{filepath.Join(dir, "none", "a.png"), nil, ""},
		{"", []string{run}, ""},
		{filepath.Join(run, Final), nil, "inside the run directory"},
		{filepath.Join(run, Checkpoints, "step-00000002.safetensors"), nil, "inside the run directory"},
		{filepath.Join(run, "missing", "a.png"), nil, "inside the run directory"},
		{filepath.Join(dir, "link", "best.safetensors"), nil, "inside the run directory"},
		{filepath.Join(dir, "soft.png"), nil, "inside the run directory"},
		{filepath.Join(dir, "hard.png"), []string{run}, "is the run's file"},
		{filepath.Join(newRun, "cpu.prof"), []string{newRun}, "inside the run directory"},
	} {
		err := Outside("-attention", c.path, c.dirs...)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "-attention")) {
			t.Errorf("Outside(%s, %v) = %v, want %q", c.path, c.dirs, err, c.want)
		}
	}
}

func TestNotInput(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "train.de")
	write(t, in)
	if err := os.Link(in, filepath.Join(dir, "link.prof")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{in, "-cpuprofile " + in + " is the file of -train-src " + in},
		{filepath.Join(dir, "link.prof"), "is the file of -train-src"},
		{filepath.Join(dir, "new.prof"), ""},
		{"", ""},
	} {
		err := NotInput("-cpuprofile", c.path, "-bpe", "", "-train-src", in)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("NotInput(%s) = %v, want %q", c.path, err, c.want)
		}
	}
}

// TestCloseRemovesTheParentsCreateMade refuses a run whose -out needed new
// parents: Close removes every directory Create made, and nothing above.
func TestCloseRemovesTheParentsCreateMade(t *testing.T) {
	root := t.TempDir()
	d, err := Create(filepath.Join(root, "a", "b", "out"), false)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if entries, err := os.ReadDir(root); err != nil || len(entries) != 0 {
		t.Errorf("Close left %v in %s (%v)", entries, root, err)
	}
}

// TestCheckNoticesARenamedDirectory renames a locked directory and makes
// another at its path: Check refuses, Clear removes nothing from the new
// one, and Close leaves it alone.
func TestCheckNoticesARenamedDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	d, err := Create(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Check(); err != nil {
		t.Fatalf("Check of the locked directory: %v", err)
	}
	if err := os.Rename(dir, dir+"-old"); err != nil {
		t.Fatal(err)
	}
	if err := d.Check(); err == nil || !strings.Contains(err.Error(), dir+" is no longer the one this process locked") {
		t.Errorf("Check after a rename: %v", err)
	}
	write(t, filepath.Join(dir, Settings))
	write(t, filepath.Join(dir, Lock))
	if err := d.Clear(); err == nil {
		t.Error("Clear of a directory that is not the locked one: no error")
	}
	d.Close()
	if !exists(filepath.Join(dir, Settings)) || !exists(filepath.Join(dir, Lock)) {
		t.Error("the old run's process removed the new run's files")
	}
}

// TestCreateRefusesAPathInsideARun: a new run's directory inside another
// run (in its checkpoints/ too, by a symbolic link too) or inside a run
// that is still starting (locked, without run.json) is refused before
// anything is made, -overwrite or not; beside a run it is not.
func TestCreateRefusesAPathInsideARun(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "run")
	write(t, filepath.Join(run, Settings))
	write(t, filepath.Join(run, Checkpoints, "step-00000002.safetensors"))
	if err := os.Symlink(run, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	starting, err := Create(filepath.Join(dir, "starting"), false)
	if err != nil {
		t.Fatal(err)
	}
	defer starting.Close()
	for _, path := range []string{
		filepath.Join(run, Checkpoints, "step-00000030.safetensors"), filepath.Join(run, "sub", "new"),
		filepath.Join(dir, "link", "new"), filepath.Join(dir, "starting", "new"),
	} {
		for _, overwrite := range []bool{false, true} {
			d, err := Create(path, overwrite)
			if err == nil || !strings.Contains(err.Error(), "is inside the run directory") {
				d.Close()
				t.Errorf("Create(%s, %v) = %v, want it refused", path, overwrite, err)
			}
			if exists(path) {
				t.Errorf("Create(%s, %v) made it", path, overwrite)
			}
		}
	}
	d, err := Create(filepath.Join(dir, "beside"), false)
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
}
