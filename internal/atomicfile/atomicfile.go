// Package atomicfile is the project's one way to write a file: so that a
// reader, or the next run after a crash, sees the old file whole or the new
// file whole, never a torn one.
//
// Write creates a temporary file beside the destination (named
// ".NAME.tmp-RANDOM"), writes it (through a buffer), sets permission 0644,
// syncs it to disk, renames it over the destination and syncs the
// directory, so that the rename itself survives a power cut. On error the
// temporary file is removed. Clean removes the temporaries that a killed
// process left behind. WriteScratch does the same without the syncs, for
// scratch files whose loss on a crash is harmless.
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
	return errors.Wrapf(write(path, buffered(fill), true), "write %s", path)
}

// WriteBytes writes data to path atomically.
func WriteBytes(path string, data []byte) error {
	return errors.Wrapf(write(path, whole(data), true), "write %s", path)
}

// WriteScratch writes data to path as WriteBytes does, so that a reader
// sees the old file or the new one whole, but syncs neither the file nor
// its directory: a crash may lose it, or leave it empty. It is for scratch
// files whose loss on a crash is harmless (a build's temporary folder,
// made again by the next run), where the syncs would cost more than the
// write.
func WriteScratch(path string, data []byte) error {
	return errors.Wrapf(write(path, whole(data), false), "write %s", path)
}

// buffered is a fill of the temporary file that writes what fill writes
// through a buffer.
func buffered(fill func(w *bufio.Writer) error) func(f *os.File) error {
	return func(f *os.File) error {
		w := bufio.NewWriterSize(f, 1<<20)
		if err := fill(w); err != nil {
			return err
		}
		return w.Flush()
	}
}

// whole is a fill of the temporary file that writes data, which is in
// memory already, without a buffer.
func whole(data []byte) func(f *os.File) error {
	return func(f *os.File) error {
		_, err := f.Write(data)
		return err
	}
}

// write does Write's steps with fill writing the temporary file, syncing
// the file and its directory if durable; its errors say which step failed.
func write(path string, fill func(f *os.File) error, durable bool) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+tmpMarker+"*")
	if err != nil {
		return errors.Wrap(err, "create temporary file")
	}
	if err := writeTemp(tmp, fill, durable); err != nil {
		_ = os.Remove(tmp.Name()) // the write error matters more
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		_ = os.Remove(tmp.Name()) // the rename error matters more
		return errors.Wrap(err, "replace destination")
	}
	if !durable {
		return nil
	}
	return SyncDir(dir)
}

// writeTemp fills f, makes it 0644, syncs it if durable and closes it.
func writeTemp(f *os.File, fill func(f *os.File) error, durable bool) error {
	err := fill(f)
	if err == nil {
		err = f.Chmod(Mode)
	}
	if err == nil && durable {
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
