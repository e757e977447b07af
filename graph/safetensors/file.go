package safetensors

import (
	"bufio"
	"os"
	"path/filepath"

	"github.com/pkg/errors"
)

// fileMode is the permission of the files that Write creates.
const fileMode = 0o644

// Read reads and checks the safetensors file at path.
func Read(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, errors.Wrap(err, "safetensors")
	}
	f, err := decode(data)
	if err != nil {
		return nil, errors.Wrapf(err, "safetensors: read %s", path)
	}
	return f, nil
}

// Write writes tensors and metadata to the file at path in the layout that
// Encode produces, with permission 0644.
//
// Write is atomic: it writes a temporary file in the same directory, syncs
// it to disk and renames it to path, so that path holds either its old
// content or the complete new file, even after a crash. On error no
// temporary file is left behind.
func Write(path string, tensors []Tensor, metadata map[string]string) error {
	enc, err := prepare(tensors, metadata)
	if err == nil {
		err = writeAtomic(path, enc)
	}
	return errors.Wrapf(err, "safetensors: write %s", path)
}

// writeAtomic writes enc to a temporary file and renames it to path.
func writeAtomic(path string, enc *encoding) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return errors.Wrap(err, "create temporary file")
	}
	if err := fill(tmp, enc); err != nil {
		_ = os.Remove(tmp.Name()) // The error being returned matters more.
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		_ = os.Remove(tmp.Name()) // The error being returned matters more.
		return errors.Wrap(err, "replace destination")
	}
	return syncDir(dir)
}

// fill writes enc to tmp, syncs and closes it.
func fill(tmp *os.File, enc *encoding) error {
	w := bufio.NewWriter(tmp)
	err := enc.writeTo(w)
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = tmp.Chmod(fileMode)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	return errors.Wrapf(err, "write temporary file %s", tmp.Name())
}

// syncDir makes the rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return errors.Wrap(err, "sync directory")
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return errors.Wrap(err, "sync directory")
}
