package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"sort"
	"unicode/utf8"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/internal/strictjson"
)

// prefixLen is the length of the header size prefix.
const prefixLen = 8

// entry is one tensor of a header with its byte range in the buffer.
type entry struct {
	name       string
	begin, end uint64
}

// headerInfo is the JSON form of one tensor in a header.
type headerInfo struct {
	DType       DType    `json:"dtype"`
	Shape       []int    `json:"shape"`
	DataOffsets []uint64 `json:"data_offsets"`
}

// Decode parses the safetensors content in data. The Data of the returned
// tensors shares memory with data.
func Decode(data []byte) (*File, error) {
	f, err := decode(data)
	return f, errors.Wrap(err, "safetensors: decode")
}

// decode parses data without adding context to its errors.
func decode(data []byte) (*File, error) {
	header, buf, err := split(data)
	if err != nil {
		return nil, err
	}
	f, entries, err := decodeHeader(header, uint64(len(buf)))
	if err == nil {
		err = attach(f, entries, buf)
	}
	if err != nil {
		return nil, err
	}
	return f, nil
}

// decodeHeader parses a header and checks that its tensors cover a buffer
// of size bytes exactly; the tensors' Data is left nil.
func decodeHeader(header []byte, size uint64) (*File, []entry, error) {
	f := &File{Tensors: map[string]Tensor{}}
	entries, err := parseHeader(header, f)
	if err != nil {
		return nil, nil, err
	}
	return f, entries, checkLayout(entries, size)
}

// attach gives the tensors of f their bytes of buf and checks them.
func attach(f *File, entries []entry, buf []byte) error {
	for _, e := range entries {
		t := f.Tensors[e.name]
		t.Data = buf[e.begin:e.end:e.end]
		if err := t.check(); err != nil {
			return err
		}
		f.Tensors[e.name] = t
	}
	return nil
}

// split returns the header and the byte buffer of data.
func split(data []byte) (header, buf []byte, err error) {
	if len(data) < prefixLen {
		return nil, nil, errors.Errorf("truncated: %d bytes, the header size alone takes %d", len(data), prefixLen)
	}
	n := binary.LittleEndian.Uint64(data)
	if n > MaxHeader {
		return nil, nil, headerTooLong(n)
	}
	if n > uint64(len(data)-prefixLen) {
		return nil, nil, errors.Errorf("header size %d exceeds the %d bytes that follow it", n, len(data)-prefixLen)
	}
	end := prefixLen + int(n)
	return data[prefixLen:end], data[end:], nil
}

// MaxHeader bounds a header's size in bytes, as the reference
// implementation does (100 MB): a larger size prefix is refused before
// anything more is read.
const MaxHeader = 100 << 20

func headerTooLong(n uint64) error {
	return errors.Errorf("header size %d is more than the %d bytes a header may have", n, MaxHeader)
}

// parseHeader parses the JSON header into f's metadata and tensors, whose
// Data it leaves nil, and returns the tensors' byte ranges.
func parseHeader(header []byte, f *File) ([]entry, error) {
	if !utf8.Valid(header) {
		return nil, errors.New("header is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(header))
	tok, err := dec.Token()
	if err != nil {
		return nil, errors.Wrap(err, "header JSON")
	}
	if tok != json.Delim('{') {
		return nil, errors.Errorf("header is not a JSON object but starts with %v", tok)
	}
	var entries []entry
	for dec.More() {
		name, raw, err := nextMember(dec)
		if err != nil {
			return nil, err
		}
		e, err := addMember(f, name, raw)
		if err != nil {
			return nil, err
		}
		if e != nil {
			entries = append(entries, *e)
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, errors.Wrap(err, "header JSON")
	}
	if len(bytes.Trim(header[dec.InputOffset():], " \t\r\n")) != 0 {
		return nil, errors.New("header has data after its JSON object")
	}
	return entries, nil
}

// nextMember reads the next name and value of the JSON object in dec.
func nextMember(dec *json.Decoder) (string, json.RawMessage, error) {
	tok, err := dec.Token()
	if err != nil {
		return "", nil, errors.Wrap(err, "header JSON")
	}
	name, _ := tok.(string)
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return "", nil, errors.Wrapf(err, "header JSON at %q", name)
	}
	return name, raw, nil
}

// addMember adds the header member name with JSON value raw to f and
// returns its byte range, or nil for the metadata.
func addMember(f *File, name string, raw json.RawMessage) (*entry, error) {
	if _, dup := f.Tensors[name]; dup || (name == metadataKey && f.Metadata != nil) {
		return nil, errors.Errorf("header has %q twice", name)
	}
	if name == metadataKey {
		if err := json.Unmarshal(raw, &f.Metadata); err != nil || f.Metadata == nil {
			return nil, errors.Errorf("%s is not an object of strings: %s", metadataKey, raw)
		}
		return nil, errors.Wrap(strictjson.NoDuplicateFields(raw), metadataKey)
	}
	var info headerInfo
	if err := json.Unmarshal(raw, &info); err != nil {
		return nil, errors.Wrapf(err, "tensor %q", name)
	}
	if info.DType == "" || info.Shape == nil || len(info.DataOffsets) != 2 {
		return nil, errors.Errorf("tensor %q: needs dtype, shape and two data_offsets: %s", name, raw)
	}
	f.Tensors[name] = Tensor{Name: name, DType: info.DType, Shape: info.Shape}
	return &entry{name: name, begin: info.DataOffsets[0], end: info.DataOffsets[1]}, nil
}

// checkLayout reports whether the byte ranges of entries cover a buffer of
// size bytes exactly once. It sorts entries by offset.
func checkLayout(entries []entry, size uint64) error {
	for _, e := range entries {
		if e.begin > e.end || e.end > size {
			return errors.Errorf("tensor %q: data_offsets [%d, %d] out of bounds of the %d-byte buffer",
				e.name, e.begin, e.end, size)
		}
	}
	sort.Slice(entries, func(i, j int) bool {
		a, b := entries[i], entries[j]
		if a.begin != b.begin {
			return a.begin < b.begin
		}
		if a.end != b.end {
			return a.end < b.end
		}
		return a.name < b.name
	})
	var pos uint64
	for i, e := range entries {
		switch {
		case e.begin < pos:
			p := entries[i-1]
			return errors.Errorf("tensor %q: data_offsets [%d, %d] overlap those of tensor %q [%d, %d]",
				e.name, e.begin, e.end, p.name, p.begin, p.end)
		case e.begin > pos:
			return errors.Errorf("tensor %q: bytes [%d, %d) before its data belong to no tensor", e.name, pos, e.begin)
		}
		pos = e.end
	}
	if pos != size {
		return errors.Errorf("bytes [%d, %d) at the end of the buffer belong to no tensor", pos, size)
	}
	return nil
}
