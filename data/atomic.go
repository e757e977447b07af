package data

import (
	"bufio"
	"os"
	"path/filepath"

	"github.com/pkg/errors"
)

// writeFileAtomic writes path through a temporary file in the same directory
// that is renamed over path only after write succeeded and the data reached
// the disk, so readers see either the old file or the complete new one.
func writeFileAtomic(path string, write func(w *bufio.Writer) error) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return errors.Wrapf(err, "create temporary file for %s", path)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	w := bufio.NewWriter(f)
	if err := write(w); err != nil {
		return errors.Wrapf(err, "write %s", path)
	}
	if err := w.Flush(); err != nil {
		return errors.Wrapf(err, "write %s", path)
	}
	if err := f.Chmod(0o644); err != nil {
		return errors.Wrapf(err, "chmod %s", f.Name())
	}
	if err := f.Sync(); err != nil {
		return errors.Wrapf(err, "sync %s", f.Name())
	}
	if err := f.Close(); err != nil {
		return errors.Wrapf(err, "close %s", f.Name())
	}
	return errors.Wrapf(os.Rename(f.Name(), path), "rename %s to %s", f.Name(), path)
}
