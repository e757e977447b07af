//go:build unix

package rundir

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/pkg/errors"
)

// lockDir takes an exclusive, non-blocking lock on dir's lock file and
// writes this process's id into it. The kernel releases the lock when the
// process ends, however it ends, so a killed run never leaves its
// directory locked.
func lockDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, Lock)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, errors.Wrap(err, "locking the run directory")
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		pid, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, errors.Errorf("%s is in use by another run (process %s); wait for it to end", dir, strings.TrimSpace(string(pid)))
		}
		return nil, errors.Wrapf(err, "locking %s", path)
	}
	if err := writePID(f); err != nil {
		f.Close()
		return nil, errors.Wrapf(err, "locking %s", path)
	}
	return f, nil
}

// writePID replaces the lock file's content with this process's id.
func writePID(f *os.File) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return err
}

// unlockDir releases the lock.
func unlockDir(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return errors.Wrap(err, "unlocking the run directory")
}
