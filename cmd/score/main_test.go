package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const python = "/usr/bin/python3"

func TestScoresMatchPyTorch(t *testing.T) {
	if err := exec.Command(python, "-c", "import torch").Run(); err != nil {
		msg := "PyTorch not found for " + python + ": apt-get install python3-torch"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	dir := t.TempDir()
	if out, err := exec.Command(python, "../../model/testdata/torch_parity.py", dir, "3").CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var stdout, stderr bytes.Buffer
	err := run([]string{"-checkpoint", filepath.Join(dir, "model.safetensors"), "-from", "torch", "-heads", "4",
		"-src", filepath.Join(dir, "src.txt"), "-tgt", filepath.Join(dir, "tgt.txt"), "-batch", "4"}, &stdout, &stderr)
	if err != nil {
		t.Fatal(err, stderr.String())
	}
	want, _ := os.ReadFile(filepath.Join(dir, "expected.txt"))
	got, exp := strings.Fields(stdout.String()), strings.Fields(string(want))
	if len(got) != len(exp) {
		t.Fatalf("%d scores, want %d", len(got), len(exp))
	}
	for i := range got {
		g, _ := strconv.ParseFloat(got[i], 64)
		e, _ := strconv.ParseFloat(exp[i], 64)
		if d := (g - e) / e; d > 1e-4 || d < -1e-4 {
			t.Errorf("line %d: %g, PyTorch %g", i+1, g, e)
		}
	}
}

func TestErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	src := write("src.txt", "5 6\n7\n")
	bad := write("bad.txt", "5 6\n7 x 9\n")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-src", src}, "required"},
		{[]string{"-checkpoint", src, "-src", src, "-tgt", src, "-from", "onnx"}, "torch"},
		{[]string{"-checkpoint", src, "-src", src, "-tgt", src, "-from", "torch"}, "-heads"},
		{[]string{"-checkpoint", filepath.Join(dir, "none.safetensors"), "-src", src, "-tgt", src}, "none.safetensors"},
		{[]string{"-checkpoint", src, "-src", src, "-tgt", bad}, "src.txt"},
	}
	for _, tc := range tests {
		var out, errb bytes.Buffer
		err := run(tc.args, &out, &errb)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one mentioning %q", tc.args, err, tc.want)
		}
	}
	if _, err := readIDs(bad, 100); err == nil || !strings.Contains(err.Error(), "bad.txt:2: token 2") {
		t.Errorf("bad id: %v", err)
	}
}
