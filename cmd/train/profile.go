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
	out, err := os.Create(f.cpuProfile)
	if err != nil {
		return errors.Wrap(err, "-cpuprofile")
	}
	defer out.Close()
	if err := pprof.StartCPUProfile(out); err != nil {
		return errors.Wrap(err, "-cpuprofile")
	}
	defer pprof.StopCPUProfile()
	return fn()
}

// writeHeapProfile writes the live heap to path (nothing for ""): called
// while the trainer is still alive, so the profile shows what training holds.
func writeHeapProfile(path string) error {
	if path == "" {
		return nil
	}
	out, err := os.Create(path)
	if err != nil {
		return errors.Wrap(err, "-memprofile")
	}
	runtime.GC()
	if err := pprof.WriteHeapProfile(out); err != nil {
		out.Close()
		return errors.Wrap(err, "-memprofile")
	}
	return errors.Wrap(out.Close(), "-memprofile")
}
