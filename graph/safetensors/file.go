package safetensors

import (
	"bufio"
	"os"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/internal/atomicfile"
)

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
// Write is atomic: path holds either its old content or the complete new
// file, even after a crash, and on error no temporary file is left behind.
func Write(path string, tensors []Tensor, metadata map[string]string) error {
	enc, err := prepare(tensors, metadata)
	if err != nil {
		return errors.Wrapf(err, "safetensors: write %s", path)
	}
	return errors.Wrap(atomicfile.Write(path, func(w *bufio.Writer) error { return enc.writeTo(w) }), "safetensors")
}
