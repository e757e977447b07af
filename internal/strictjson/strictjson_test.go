package strictjson

import (
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
