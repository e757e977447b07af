// Package atomicfile is the project's one way to write a file: so that a
// reader, or the next run after a crash, sees the old file whole or the new
// file whole, never a torn one.
//
// Write creates a temporary file beside the destination (named
// ".NAME.tmp-RANDOM"), writes it through a buffer, sets permission 0644,
// syncs it to disk, renames it over the destination and syncs the
// directory, so that the rename itself survives a power cut. On error the
// temporary file is removed. Clean removes the temporaries that a killed
// process left behind.
package atomicfile

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"

	"github.com/pkg/errors"
)

// Mode is the permission of the files Write creates.
const Mode = 0o644

// tmpMarker sits in the name of every temporary file, between the
// destination's name and the random suffix.
const tmpMarker = ".tmp-"

// Write writes path atomically with what fill writes to w.
func Write(path string, fill func(w *bufio.Writer) error) error {
	return errors.Wrapf(write(path, fill), "write %s", path)
}

// write does Write's steps; its errors say which step failed.
func write(path string, fill func(w *bufio.Writer) error) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+tmpMarker+"*")
	if err != nil {
		return errors.Wrap(err, "create temporary file")
	}
	if err := writeSynced(tmp, fill); err != nil {
		_ = os.Remove(tmp.Name()) // the write error matters more
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		_ = os.Remove(tmp.Name()) // the rename error matters more
		return errors.Wrap(err, "replace destination")
	}
	return SyncDir(dir)
}

// WriteBytes writes data to path atomically.
func WriteBytes(path string, data []byte) error {
	return Write(path, func(w *bufio.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// writeSynced fills f through a buffer, makes it 0644, syncs and closes it.
func writeSynced(f *os.File, fill func(w *bufio.Writer) error) error {
	w := bufio.NewWriterSize(f, 1<<20)
	err := fill(w)
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = f.Chmod(Mode)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// SyncDir makes the latest renames and creations in dir durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return errors.Wrap(err, "sync directory")
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return errors.Wrapf(err, "sync directory %s", dir)
}

// IsTemp reports whether name (a base name) is one of Write's temporary files.
func IsTemp(name string) bool {
	return strings.HasPrefix(name, ".") && strings.Contains(name, tmpMarker)
}

// Clean removes the temporary files that Write left in dir when its
// process was killed, and returns their names. Only call it on a directory
// no other process is writing to.
func Clean(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, errors.Wrapf(err, "cleaning %s", dir)
	}
	var removed []string
	for _, e := range entries {
		if e.Type().IsRegular() && IsTemp(e.Name()) {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return removed, errors.Wrapf(err, "cleaning %s", dir)
			}
			removed = append(removed, e.Name())
		}
	}
	return removed, nil
}
