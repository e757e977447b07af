package model

import (
	"os"
	"path/filepath"

	"github.com/pkg/errors"
)

// WriteFileAtomic writes data to path through a temporary file in the same
// directory and a rename, so a reader never sees a half-written file and a
// crash leaves the old file whole.
func WriteFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return errors.Wrapf(err, "writing %s", path)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return errors.Wrapf(err, "writing %s", path)
	}
	return nil
}
