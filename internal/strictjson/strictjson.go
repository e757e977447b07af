// Package strictjson decodes the project's JSON files (model configs,
// run settings) strictly: one object, no unknown field, nothing after it.
package strictjson

import (
	"bytes"
	"encoding/json"
	"io"

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
	return nil
}
