package main

import (
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"

	"github.com/pkg/errors"
)

// profiled runs fn under the CPU profile that -cpuprofile asks for.
func profiled(f *flags, fn func() error) error {
	if f.cpuProfile == "" {
		return fn()
	}
	out, err := createProfile("-cpuprofile", f.cpuProfile)
	if err != nil {
		return err
	}
	defer out.Close()
	if err := pprof.StartCPUProfile(out); err != nil {
		return errors.Wrap(err, "-cpuprofile")
	}
	defer pprof.StopCPUProfile()
	return fn()
}

// outsideRun refuses a profile path (of flag) inside the run directory
// out, where it would overwrite a run's file or be a file no run writes.
func outsideRun(flag, path, out string) error {
	if path == "" {
		return nil
	}
	absPath, err := filepath.Abs(path)
	if err == nil {
		out, err = filepath.Abs(out)
	}
	if err != nil {
		return errors.Wrap(err, flag)
	}
	if rel, err := filepath.Rel(out, absPath); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return errors.Errorf("%s %s is inside the run directory %s: write it elsewhere", flag, path, out)
	}
	return nil
}

// createProfile creates the profile file path of flag before the work, so
// that a path that cannot be written is refused before training; nil for "".
func createProfile(flag, path string) (*os.File, error) {
	if path == "" {
		return nil, nil
	}
	out, err := os.Create(path)
	return out, errors.Wrap(err, flag)
}

// writeHeapProfile writes the live heap to out, created by createProfile
// (nothing for nil), and closes it: called while the trainer is still
// alive, so the profile shows what training holds.
func writeHeapProfile(out *os.File) error {
	if out == nil {
		return nil
	}
	runtime.GC()
	if err := pprof.WriteHeapProfile(out); err != nil {
		return errors.Wrap(err, "-memprofile")
	}
	return errors.Wrap(out.Close(), "-memprofile")
}
