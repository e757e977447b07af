//go:build unix

package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// stopAfter takes lines until it holds n, then refuses to take more.
type stopAfter struct {
	n   int
	buf bytes.Buffer
}

var errEnough = errors.New("enough lines")

func (s *stopAfter) Write(p []byte) (int, error) {
	if strings.Count(s.buf.String(), "\n") >= s.n {
		return 0, errEnough
	}
	return s.buf.Write(p)
}

// endlessFIFO makes a named pipe that serves line for ever (until its
// reader closes it).
func endlessFIFO(t *testing.T, dir, name, line string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	go func() {
		f, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer f.Close()
		chunk := []byte(strings.Repeat(line, 64))
		for {
			if _, err := f.Write(chunk); err != nil {
				return
			}
		}
	}()
	return p
}

// TestStreamsEndlessInput scores pairs from files that never end: each
// batch's scores are written as they are done, so the run ends when the
// output is refused instead of reading the input for ever.
func TestStreamsEndlessInput(t *testing.T) {
	dir := t.TempDir()
	ck, _, _ := writeCheckpoint(t, dir)
	src := endlessFIFO(t, dir, "src", "5 6 2\n")
	tgt := endlessFIFO(t, dir, "tgt", "1 5 2\n")
	out := &stopAfter{n: 4}
	var errb bytes.Buffer
	err := run([]string{"-checkpoint", ck, "-src", src, "-tgt", tgt, "-batch", "2"}, out, &errb)
	if !errors.Is(err, errEnough) || strings.Count(out.buf.String(), "\n") != 4 {
		t.Errorf("error %v after %q, want the output refused after 4 lines", err, out.buf.String())
	}
}
