package main

import (
	"os"
	"runtime"
	"runtime/pprof"

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
