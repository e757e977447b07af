package main

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/internal/atomicfile"
)

// profiles are the pprof files a run writes (-cpuprofile, -memprofile).
// They are made in memory and written to their files only once the run
// got past its checks and trained, so that a refused run replaces no
// file.
type profiles struct {
	cpuPath, memPath string
	cpu, heap        bytes.Buffer
	// trained is set when the run starts training.
	trained bool
}

// profiled runs fn under the CPU profile that -cpuprofile asks for, after
// checking that both profiles' files can be written.
func profiled(f *flags, fn func(*profiles) error) error {
	p := &profiles{cpuPath: f.cpuProfile, memPath: f.memProfile}
	for _, c := range [][2]string{{"-cpuprofile", p.cpuPath}, {"-memprofile", p.memPath}} {
		if err := writable(c[0], c[1]); err != nil {
			return err
		}
	}
	if p.cpuPath != "" {
		if err := pprof.StartCPUProfile(&p.cpu); err != nil {
			return errors.Wrap(err, "-cpuprofile")
		}
	}
	err := fn(p)
	if p.cpuPath != "" {
		pprof.StopCPUProfile()
	}
	if !p.trained {
		return err
	}
	for _, w := range []struct {
		flag, path string
		buf        *bytes.Buffer
	}{{"-cpuprofile", p.cpuPath, &p.cpu}, {"-memprofile", p.memPath, &p.heap}} {
		if w.path == "" {
			continue
		}
		if werr := atomicfile.WriteBytes(w.path, w.buf.Bytes()); err == nil {
			err = errors.Wrap(werr, w.flag)
		}
	}
	return err
}

// writable checks, without touching path, that a file can be written
// there (nothing for ""): its directory exists and takes files, and path
// is no directory.
func writable(flag, path string) error {
	if path == "" {
		return nil
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return errors.Errorf("%s: open %s: is a directory", flag, path)
	}
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return errors.Errorf("%s: open %s: its directory %s does not exist", flag, path, dir)
	}
	f, err := os.CreateTemp(dir, ".profile-check-*")
	if err != nil {
		return errors.Wrapf(err, "%s %s: its directory is not writable", flag, path)
	}
	f.Close()
	return errors.Wrap(os.Remove(f.Name()), flag)
}

// writeHeap profiles the live heap, if -memprofile asks: called while the
// trainer is still alive, so the profile shows what training holds.
func (p *profiles) writeHeap() error {
	if p.memPath == "" {
		return nil
	}
	runtime.GC()
	return errors.Wrap(pprof.WriteHeapProfile(&p.heap), "-memprofile")
}
