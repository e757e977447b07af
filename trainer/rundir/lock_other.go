//go:build !unix

package rundir

import (
	"os"
	"path/filepath"

	"github.com/pkg/errors"
)

// lockDir creates dir's lock file exclusively. Without flock, a run killed
// before Close leaves the file behind; the error says to remove it.
func lockDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, Lock)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if os.IsExist(err) {
		return nil, errors.Errorf("%s is in use by another run (remove %s if no run is using it)", dir, path)
	}
	return f, errors.Wrap(err, "locking the run directory")
}

// unlockDir releases the lock by removing the lock file.
func unlockDir(f *os.File) error {
	f.Close()
	return errors.Wrap(os.Remove(f.Name()), "unlocking the run directory")
}
