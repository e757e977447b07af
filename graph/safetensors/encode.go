package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"sort"
	"strconv"
	"unicode/utf8"

	"github.com/pkg/errors"
)

// headerAlign is the multiple that the header length is padded to.
const headerAlign = 8

// encoding is checked content ready to be written.
type encoding struct {
	header  []byte
	tensors []Tensor
}

// Encode writes tensors and metadata to w in the safetensors format. It
// checks all tensors before it writes anything, so that an invalid tensor
// leaves w untouched.
//
// The output is deterministic: tensors are laid out by decreasing element
// size and then by name, which keeps every tensor's data aligned to its
// element size as the reference implementation does, and the header lists
// them in that order after the metadata, padded with spaces to a multiple of
// 8 bytes. Metadata is omitted when empty.
func Encode(w io.Writer, tensors []Tensor, metadata map[string]string) error {
	enc, err := prepare(tensors, metadata)
	if err == nil {
		err = enc.writeTo(w)
	}
	return errors.Wrap(err, "safetensors: encode")
}

// prepare checks tensors and metadata and builds their header.
func prepare(tensors []Tensor, metadata map[string]string) (*encoding, error) {
	ordered, err := order(tensors)
	if err != nil {
		return nil, err
	}
	var h bytes.Buffer
	h.WriteByte('{')
	if len(metadata) > 0 {
		if err := writeMetadata(&h, metadata); err != nil {
			return nil, err
		}
	}
	var offset int
	for i, t := range ordered {
		if i > 0 || len(metadata) > 0 {
			h.WriteByte(',')
		}
		writeInfo(&h, t, offset)
		offset += len(t.Data)
	}
	h.WriteByte('}')
	for h.Len()%headerAlign != 0 {
		h.WriteByte(' ')
	}
	return &encoding{header: h.Bytes(), tensors: ordered}, nil
}

// order checks tensors and returns them in the order of their data.
func order(tensors []Tensor) ([]Tensor, error) {
	ordered := append([]Tensor(nil), tensors...)
	sort.Slice(ordered, func(i, j int) bool {
		a, b := ordered[i], ordered[j]
		if sa, sb := a.DType.Size(), b.DType.Size(); sa != sb {
			return sa > sb
		}
		return a.Name < b.Name
	})
	seen := make(map[string]bool, len(ordered))
	for _, t := range ordered {
		if err := checkName(t.Name); err != nil {
			return nil, err
		}
		if seen[t.Name] {
			return nil, errors.Errorf("tensor %q given twice", t.Name)
		}
		seen[t.Name] = true
		if err := t.check(); err != nil {
			return nil, err
		}
	}
	return ordered, nil
}

// writeMetadata writes the metadata member of a header, keys sorted.
func writeMetadata(h *bytes.Buffer, metadata map[string]string) error {
	keys := make([]string, 0, len(metadata))
	for k, v := range metadata {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return errors.Errorf("metadata %q: key or value is not valid UTF-8", k)
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	writeString(h, metadataKey)
	h.WriteString(":{")
	for i, k := range keys {
		if i > 0 {
			h.WriteByte(',')
		}
		writeString(h, k)
		h.WriteByte(':')
		writeString(h, metadata[k])
	}
	h.WriteByte('}')
	return nil
}

// writeInfo writes the header member of t, whose data starts at offset.
func writeInfo(h *bytes.Buffer, t Tensor, offset int) {
	writeString(h, t.Name)
	h.WriteString(`:{"dtype":`)
	writeString(h, string(t.DType))
	h.WriteString(`,"shape":[`)
	for i, d := range t.Shape {
		if i > 0 {
			h.WriteByte(',')
		}
		h.WriteString(strconv.Itoa(d))
	}
	h.WriteString(`],"data_offsets":[`)
	h.WriteString(strconv.Itoa(offset))
	h.WriteByte(',')
	h.WriteString(strconv.Itoa(offset + len(t.Data)))
	h.WriteString("]}")
}

// writeString writes s, valid UTF-8, as a JSON string.
func writeString(h *bytes.Buffer, s string) {
	enc := json.NewEncoder(h)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // Encoding a string into a bytes.Buffer cannot fail.
	h.Truncate(h.Len() - 1)
}

// writeTo writes the size prefix, header and data of e to w.
func (e *encoding) writeTo(w io.Writer) error {
	var prefix [prefixLen]byte
	binary.LittleEndian.PutUint64(prefix[:], uint64(len(e.header)))
	if _, err := w.Write(prefix[:]); err != nil {
		return errors.Wrap(err, "write header size")
	}
	if _, err := w.Write(e.header); err != nil {
		return errors.Wrap(err, "write header")
	}
	for _, t := range e.tensors {
		if _, err := w.Write(t.Data); err != nil {
			return errors.Wrapf(err, "write tensor %q", t.Name)
		}
	}
	return nil
}
