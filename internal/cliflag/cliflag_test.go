package cliflag

import (
	"bytes"
	"flag"
	"strings"
	"testing"
)

func TestOptionalFlags(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	var f float64
	var i int
	Float(fs, &f, "dropout", "dropout (default: the preset's)")
	Int(fs, &i, "layer", "layer (default: the last)")
	var help bytes.Buffer
	fs.SetOutput(&help)
	fs.PrintDefaults()
	if strings.Contains(help.String(), "-1") || !strings.Contains(help.String(), "the preset's") {
		t.Errorf("help:\n%s", help.String())
	}
	if f != Unset || i != Unset {
		t.Fatalf("not given: %v and %v, want %v", f, i, Unset)
	}
	if err := fs.Parse([]string{"-dropout", "0.25", "-layer", "3"}); err != nil || f != 0.25 || i != 3 {
		t.Fatalf("given: %v and %v (%v)", f, i, err)
	}
	fs.SetOutput(&help)
	for _, bad := range [][]string{{"-dropout", "x"}, {"-layer", "1.5"}} {
		if err := fs.Parse(bad); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}
