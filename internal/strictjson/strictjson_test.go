package strictjson

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDecode(t *testing.T) {
	type v struct{ A int }
	for _, tc := range []struct{ in, err string }{
		{`{"A": 1}`, ""},
		{"{\"A\": 1}\n \t\n", ""},
		{`{"A": 1} {"A": 2}`, "more after the JSON object that ends at byte 8"},
		{`{"A": 1} x`, "more after the JSON object"},
		{`{"B": 1}`, `unknown field "B"`},
		{`{"A": `, "unexpected EOF"},
		{`{"A": 2, "A": 1}`, `field "A" appears twice`},
		{`{"A": 1, "B": {"A": 1}}`, `unknown field "B"`},
	} {
		var got v
		err := Decode([]byte(tc.in), &got)
		if tc.err == "" && (err != nil || got.A != 1) {
			t.Errorf("%q: %v, %+v", tc.in, err, got)
		}
		if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%q: error %v, want one saying %q", tc.in, err, tc.err)
		}
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, 1<<40); err != nil {
		t.Fatal(err)
	}
	small := filepath.Join(dir, "small.json")
	if err := os.WriteFile(small, []byte(`{"A": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, err string }{
		{big, "has 1099511627776 bytes, more than the 1048576"},
		{dir, "is not a regular file"},
		{"/dev/zero", "is not a regular file"},
		{filepath.Join(dir, "none.json"), "no such file"},
	} {
		if _, err := ReadFile(tc.path); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("ReadFile(%s): %v, want an error saying %q", tc.path, err, tc.err)
		}
	}
	var v struct{ A int }
	if err := DecodeFile(small, &v); err != nil || v.A != 1 {
		t.Errorf("DecodeFile: %v, %+v", err, v)
	}
}

func TestDuplicateField(t *testing.T) {
	for in, want := range map[string]string{
		`{"a": 1, "b": {"a": 1, "b": [{"a": 1}, {"a": 2}]}, "c": [1, {"a": 3}]}`: "",
		`{"a": {"x": 1, "y": [1, 2]}, "b": 2, "a": 3}`:                           `field "a" appears twice`,
		`{"a": [{"x": 1, "x": 2}]}`:                                              `field "x" appears twice`,
		`{"a": "a", "b": "a"}`:                                                   "",
		`[{"a": 1}, {"a": 1}]`:                                                   "",
		`{}`:                                                                     "",
	} {
		err := duplicateField([]byte(in))
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: %v, want %q", in, err, want)
		}
	}
}

// FuzzDuplicateField checks duplicateField against decoding into a map,
// which keeps one value per field: an object with fewer map entries than
// fields is refused.
func FuzzDuplicateField(f *testing.F) {
	for _, s := range []string{`{"a": 1, "a": 2}`, `{"a": {"b": 1}, "b": 2}`, `{"a": [1, {"a": 1}]}`, `{}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var top map[string]json.RawMessage
		if json.Unmarshal([]byte(in), &top) != nil {
			return
		}
		dec := json.NewDecoder(strings.NewReader(in))
		dec.Token() // {
		fields := 0
		for dec.More() {
			dec.Token() // the key
			var v json.RawMessage
			if dec.Decode(&v) != nil {
				return
			}
			fields++
		}
		if err := duplicateField([]byte(in)); fields != len(top) && err == nil {
			t.Fatalf("%s: %d fields, %d distinct, not refused", in, fields, len(top))
		}
	})
}
