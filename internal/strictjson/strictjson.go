// Package strictjson decodes the project's JSON files (model configs,
// run settings) strictly: one object, no unknown field, nothing after it.
package strictjson

import (
	"bytes"
	"encoding/json"
	"io"
	"os"

	"github.com/pkg/errors"
)

// Decode decodes one JSON object from raw into v, refusing unknown fields
// and anything but white space after the object.
func Decode(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	end := dec.InputOffset()
	if _, err := dec.Token(); err != io.EOF {
		return errors.Errorf("more after the JSON object that ends at byte %d", end)
	}
	return duplicateField(raw)
}

// NoDuplicateFields refuses JSON with an object that names a field twice,
// for callers that decode with encoding/json (Decode checks it itself).
func NoDuplicateFields(raw []byte) error { return duplicateField(raw) }

// duplicateField refuses an object that names a field twice: encoding/json
// keeps the last value and drops the first without a word. raw is valid
// JSON.
func duplicateField(raw []byte) error {
	type frame struct {
		object, wantKey bool
		keys            map[string]bool
	}
	var stack []*frame
	valueDone := func() {
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].wantKey = true
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil // the end; Decode reported any other error
		}
		if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].wantKey {
			if key, ok := tok.(string); ok {
				if stack[n-1].keys[key] {
					return errors.Errorf("field %q appears twice (before byte %d): the first value would be dropped", key, dec.InputOffset())
				}
				stack[n-1].keys[key], stack[n-1].wantKey = true, false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{object: true, wantKey: true, keys: map[string]bool{}})
		case json.Delim('['):
			stack = append(stack, &frame{})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			valueDone()
		default:
			valueDone()
		}
	}
}

// MaxFile bounds the size of a JSON file that ReadFile reads: a model
// config or a run's settings take a few kilobytes.
const MaxFile = 1 << 20

// ReadFile reads the JSON file at path of at most MaxFile bytes; a larger
// file, or one that is not a regular file (a device, a pipe), is refused
// before it is read.
func ReadFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	switch {
	case err != nil:
		return nil, err
	case !st.Mode().IsRegular():
		return nil, errors.Errorf("%s is not a regular file", path)
	case st.Size() > MaxFile:
		return nil, errors.Errorf("%s has %d bytes, more than the %d a JSON settings file may have", path, st.Size(), MaxFile)
	}
	raw, err := io.ReadAll(io.LimitReader(f, MaxFile+1))
	if err == nil && len(raw) > MaxFile {
		err = errors.Errorf("%s grew past %d bytes while it was read", path, MaxFile)
	}
	return raw, err
}

// DecodeFile decodes the JSON file at path (see ReadFile and Decode) into v.
func DecodeFile(path string, v any) error {
	raw, err := ReadFile(path)
	if err != nil {
		return err
	}
	return Decode(raw, v)
}
