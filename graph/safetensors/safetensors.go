// Package safetensors reads and writes tensors in the safetensors format of
// Hugging Face (https://github.com/huggingface/safetensors).
//
// A safetensors file is an 8-byte little-endian unsigned header length N,
// then N bytes of UTF-8 JSON, then a byte buffer. The JSON object maps each
// tensor name to its dtype, shape and data_offsets, the [begin, end) range
// of its bytes in the buffer; the optional "__metadata__" entry maps strings
// to strings. Tensor data is little-endian and row-major.
//
// Decode and Read check every rule of the format: the header fits in the
// input, is valid JSON, names known dtypes, and its tensors' byte ranges fit
// their shapes and cover the buffer exactly, without overlap or gap. Encode
// and Write produce deterministic output that the reference implementation
// reads; Write replaces its destination atomically.
package safetensors

import (
	"math"
	"sort"
	"unicode/utf8"

	"github.com/pkg/errors"
)

// metadataKey is the header entry that holds the file's metadata.
const metadataKey = "__metadata__"

// Tensor is one named tensor of a safetensors file in its stored form: Data
// holds the little-endian elements of type DType in row-major order, and an
// empty Shape stands for a scalar.
type Tensor struct {
	Name  string
	DType DType
	Shape []int
	Data  []byte
}

// File is the content of a safetensors file.
type File struct {
	// Metadata is the header's "__metadata__" object, nil when absent.
	Metadata map[string]string
	// Tensors maps each tensor's name to the tensor.
	Tensors map[string]Tensor
}

// Names returns the names of f's tensors in sorted order.
func (f *File) Names() []string {
	names := make([]string, 0, len(f.Tensors))
	for name := range f.Tensors {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// NumElements returns the number of elements of t, the product of its shape,
// or an error when a dimension is negative or the product overflows int.
func (t Tensor) NumElements() (int, error) {
	n := 1
	for _, d := range t.Shape {
		if d < 0 {
			return 0, errors.Errorf("tensor %q: negative dimension in shape %v", t.Name, t.Shape)
		}
		if d != 0 && n > math.MaxInt/d {
			return 0, errors.Errorf("tensor %q: shape %v has too many elements", t.Name, t.Shape)
		}
		n *= d
	}
	return n, nil
}

// check reports whether t has a known dtype and exactly the bytes its shape
// needs.
func (t Tensor) check() error {
	size := t.DType.Size()
	if size == 0 {
		return errors.Errorf("tensor %q: unknown dtype %q", t.Name, t.DType)
	}
	n, err := t.NumElements()
	if err != nil {
		return err
	}
	if n > math.MaxInt/size {
		return errors.Errorf("tensor %q: shape %v of %s is too large", t.Name, t.Shape, t.DType)
	}
	if len(t.Data) != n*size {
		return errors.Errorf("tensor %q: has %d bytes, shape %v of %s needs %d",
			t.Name, len(t.Data), t.Shape, t.DType, n*size)
	}
	return nil
}

// checkName reports whether name may name a tensor in a header.
func checkName(name string) error {
	switch {
	case name == "":
		return errors.New("empty tensor name")
	case name == metadataKey:
		return errors.Errorf("tensor name %q is reserved for metadata", name)
	case !utf8.ValidString(name):
		return errors.Errorf("tensor name %q is not valid UTF-8", name)
	}
	return nil
}
