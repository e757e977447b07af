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

// TestParse: -h prints the usage line, the summary and the flags; a bad
// flag's error holds that flag's help alone, an unknown flag's a hint of
// -h, never the whole usage.
func TestParse(t *testing.T) {
	newSet := func() *flag.FlagSet {
		fs := flag.NewFlagSet("cmd", flag.ContinueOnError)
		fs.Int("max-len", 10, "longest `output`")
		fs.Int("len", 5, "a length")
		fs.String("name", "x", "a name")
		return fs
	}
	var out bytes.Buffer
	if err := Parse(newSet(), []string{"-h"}, "cmd [flags]", "cmd does one thing.", &out); err != flag.ErrHelp {
		t.Fatalf("-h: %v", err)
	}
	if want := "Usage: cmd [flags]\n\ncmd does one thing.\n\nFlags:\n  -len int\n"; !strings.HasPrefix(out.String(), want) {
		t.Errorf("-h printed %q, want it to start %q", out.String(), want)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-max-len", "x"}, "invalid value \"x\" for flag -max-len: parse error\n  -max-len output\n    \tlongest output (default 10)"},
		{[]string{"-len"}, "flag needs an argument: -len\n  -len int\n    \ta length (default 5)"},
		{[]string{"-bogus"}, "flag provided but not defined: -bogus (cmd -h lists every flag)"},
	} {
		out.Reset()
		err := Parse(newSet(), c.args, "cmd [flags]", "cmd does one thing.", &out)
		if err == nil || err.Error() != c.want || out.Len() > 0 {
			t.Errorf("%v: error %q, output %q; want %q and no output", c.args, err, out.String(), c.want)
		}
	}
}
