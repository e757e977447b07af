package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestBenchPrintsATable(t *testing.T) {
	var out, errb bytes.Buffer
	if err := run([]string{"-presets", "tiny", "-vocabs", "50", "-steps", "1"}, &out, &errb); err != nil {
		t.Fatal(err, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[1], "tiny") {
		t.Fatalf("table:\n%s", out.String())
	}
	if err := run([]string{"-vocabs", "x"}, &out, &errb); err == nil {
		t.Fatal("a bad vocabulary list ran")
	}
}
