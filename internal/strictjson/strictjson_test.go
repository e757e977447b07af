package strictjson

import (
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
