package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

const (
	bleuLine = "BLEU = 28.21 68.0/41.3/21.4/10.5 (BP = 1.000 ratio = 1.087 hyp_len = 50 ref_len = 46)\n"
	bleuSig  = "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0\n"
)

func TestRun(t *testing.T) {
	hyps, err := os.ReadFile("testdata/hyps.txt")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		stdin  string
		code   int
		stdout string
		stderr string // the whole of standard error; "" means none
	}{
		{"stdin", []string{"-ref", "testdata/refs.txt"}, string(hyps), 0, bleuLine + bleuSig, ""},
		{"hyp file", []string{"-ref", "testdata/refs.txt", "-hyp", "testdata/hyps.txt"}, "", 0, bleuLine + bleuSig, ""},
		{"lowercase", []string{"-ref", "testdata/refs.txt", "-lc"}, string(hyps), 0,
			"BLEU = 32.62 72.0/45.7/26.2/13.2 (BP = 1.000 ratio = 1.087 hyp_len = 50 ref_len = 46)\n" +
				"nrefs:1|case:lc|eff:no|tok:13a|smooth:exp|version:2.6.0\n", ""},
		{"tok none", []string{"-ref", "testdata/refs.txt", "-tok", "none"}, string(hyps), 0,
			"BLEU = 28.85 58.1/35.9/25.7/12.9 (BP = 1.000 ratio = 1.132 hyp_len = 43 ref_len = 38)\n" +
				"nrefs:1|case:mixed|eff:no|tok:none|smooth:exp|version:2.6.0\n", ""},
		{"chrf", []string{"-ref", "testdata/refs.txt", "-chrf"}, string(hyps), 0,
			bleuLine + bleuSig + "chrF2 = 66.10\nnrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0\n", ""},
		{"add-k", []string{"-ref", "testdata/refs.txt", "-smooth", "add-k"}, string(hyps), 0,
			"BLEU = 30.48 68.0/42.6/23.3/12.8 (BP = 1.000 ratio = 1.087 hyp_len = 50 ref_len = 46)\n" +
				"nrefs:1|case:mixed|eff:no|tok:13a|smooth:add-k[1.00]|version:2.6.0\n", ""},
		{"line count", []string{"-ref", "testdata/refs.txt", "-hyp", "testdata/hyps_3.txt"}, "", 1, "",
			"bleu: hypotheses (testdata/hyps_3.txt) have 3 lines but references (testdata/refs.txt) have more\n"},
		{"line count stdin", []string{"-ref", "testdata/refs.txt"}, "one line\n", 1, "",
			"bleu: hypotheses (stdin) have 1 lines but references (testdata/refs.txt) have more\n"},
		{"invalid UTF-8 file", []string{"-ref", "testdata/refs.txt", "-hyp", "testdata/bad_utf8.txt"}, "", 1, "",
			"bleu: testdata/bad_utf8.txt:3: invalid UTF-8\n"},
		{"invalid UTF-8 stdin", []string{"-ref", "testdata/refs.txt"}, "ok\n\xff\n", 1, "",
			"bleu: stdin:2: invalid UTF-8\n"},
		{"invalid UTF-8 reference", []string{"-ref", "testdata/bad_utf8.txt"}, string(hyps), 1, "",
			"bleu: testdata/bad_utf8.txt:3: invalid UTF-8\n"},
		{"blank reference", []string{"-ref", "testdata/refs_blank.txt"}, string(hyps), 1, "",
			"bleu: scoring stdin against testdata/refs_blank.txt: reference line 3 is empty\n"},
		{"no line breaks (/dev/zero)", []string{"-ref", "testdata/refs.txt"}, strings.Repeat("\x00", 3<<20), 1, "",
			"bleu: stdin:1: line longer than 1048576 bytes\n"},
		{"missing file", []string{"-ref", "testdata/missing.txt"}, "", 1, "",
			"bleu: open testdata/missing.txt: no such file or directory\n"},
		{"no ref", nil, string(hyps), 2, "", "bleu: -ref is required (see bleu -h)\n"},
		{"unknown flag", []string{"-ref", "testdata/refs.txt", "-x"}, "", 2, "",
			"bleu: flag provided but not defined: -x (see bleu -h)\n"},
		{"positional", []string{"-ref", "testdata/refs.txt", "hyps.txt"}, "", 2, "",
			"bleu: unexpected argument \"hyps.txt\" (see bleu -h)\n"},
		{"bad tokenizer", []string{"-ref", "testdata/refs.txt", "-tok", "intl"}, "", 2, "",
			"bleu: unknown tokenizer \"intl\" (want \"13a\" or \"none\") (see bleu -h)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tt.args, strings.NewReader(tt.stdin), &stdout, &stderr)
			if code != tt.code {
				t.Errorf("exit status %d, want %d", code, tt.code)
			}
			if stdout.String() != tt.stdout {
				t.Errorf("stdout:\n%s\nwant:\n%s", stdout.String(), tt.stdout)
			}
			if stderr.String() != tt.stderr {
				t.Errorf("stderr:\n%s\nwant:\n%s", stderr.String(), tt.stderr)
			}
		})
	}
}

func TestRunHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-h"}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Errorf("exit status %d, want 0", code)
	}
	for _, flag := range []string{"-ref", "-hyp", "-lc", "-tok", "-smooth", "-smooth-value", "-chrf"} {
		if !strings.Contains(stdout.String(), "  "+flag+" ") && !strings.Contains(stdout.String(), "  "+flag+"\n") {
			t.Errorf("help does not describe %s:\n%s", flag, stdout.String())
		}
	}
	if stderr.Len() != 0 {
		t.Errorf("stderr = %q, want nothing", stderr.String())
	}
}
