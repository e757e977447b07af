package safetensors

import (
	"bufio"
	"encoding/binary"
	"io"
	"os"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/internal/atomicfile"
)

// Read reads and checks the safetensors file at path. It checks before it
// reads: the size prefix against MaxHeader and the file's size, then the
// header, whose tensors must cover the rest of the file exactly; only then
// does it read the tensors' bytes. A path that is not a regular file (a
// device, a pipe) is refused.
func Read(path string) (*File, error) {
	f, err := read(path)
	if err != nil {
		return nil, errors.Wrapf(err, "safetensors: read %s", path)
	}
	return f, nil
}

// read is Read without the file's name on its errors.
func read(path string) (*File, error) {
	in, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, errors.Errorf("not a regular file (%v)", st.Mode().Type())
	}
	size := uint64(st.Size())
	if size < prefixLen {
		return nil, errors.Errorf("truncated: %d bytes, the header size alone takes %d", size, prefixLen)
	}
	var prefix [prefixLen]byte
	if _, err := io.ReadFull(in, prefix[:]); err != nil {
		return nil, err
	}
	n := binary.LittleEndian.Uint64(prefix[:])
	if n > MaxHeader {
		return nil, headerTooLong(n)
	}
	if n > size-prefixLen {
		return nil, errors.Errorf("header size %d exceeds the %d bytes that follow it", n, size-prefixLen)
	}
	header := make([]byte, n)
	if _, err := io.ReadFull(in, header); err != nil {
		return nil, errors.Wrap(err, "header")
	}
	f, entries, err := decodeHeader(header, size-prefixLen-n)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, size-prefixLen-n)
	if _, err := io.ReadFull(in, buf); err != nil {
		return nil, errors.Wrap(err, "tensor data (the file changed while it was read?)")
	}
	if err := attach(f, entries, buf); err != nil {
		return nil, err
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
