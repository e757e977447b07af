// Package torchtest runs PyTorch reference scripts for the parity tests: a
// script reads a JSON request on stdin and writes a JSON answer on stdout.
package torchtest

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"testing"
)

// Python is Debian's interpreter, which python3-torch installs into (another
// python3 may come first on PATH).
const Python = "/usr/bin/python3"

// Require skips t when PyTorch is missing, or fails it under CI=true.
func Require(t testing.TB) {
	t.Helper()
	if err := exec.Command(Python, "-c", "import torch").Run(); err != nil {
		msg := "PyTorch not found for " + Python + ": apt-get install python3-torch"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
}

// Run runs the Python script with request encoded as JSON on its standard
// input and decodes what it prints into answer. It calls Require first.
func Run(t testing.TB, script string, request, answer any) {
	t.Helper()
	Require(t)
	in, err := json.Marshal(request)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(Python, script)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, stderr.Bytes())
	}
	if err := json.Unmarshal(out, answer); err != nil {
		t.Fatalf("%s printed %.200q: %v", script, out, err)
	}
}
