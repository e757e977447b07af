package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// endless is an input that never ends: the same sentence, a line at a time.
type endless struct{ line string }

func (e endless) Read(p []byte) (int, error) {
	n := 0
	for n+len(e.line) <= len(p) {
		n += copy(p[n:], e.line)
	}
	return n, nil
}

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

// TestStreamsEndlessInput translates an input that never ends: the output
// of each batch is written as it is done, so the run ends when the output
// is refused, after the first batches, instead of reading the input
// for ever.
func TestStreamsEndlessInput(t *testing.T) {
	dir := writeRun(t, "sinusoidal")
	for _, args := range [][]string{
		{"-model", dir, "-method", "greedy", "-batch", "3", "-max-len", "4"},
		{"-model", dir, "-batch", "2", "-score", "/dev/zero"},
	} {
		out := &stopAfter{n: 6}
		var errb bytes.Buffer
		err := run(args, endless{"ein Hund läuft .\n"}, out, &errb)
		if strings.Contains(strings.Join(args, " "), "-score") {
			// /dev/zero is one endless line: refused at its first line's limit.
			if err == nil || !strings.Contains(err.Error(), "/dev/zero:1") {
				t.Errorf("%v: %v", args, err)
			}
			continue
		}
		if !errors.Is(err, errEnough) || strings.Count(out.buf.String(), "\n") != 6 {
			t.Errorf("%v: error %v after %q, want the output refused after 6 lines", args, err, out.buf.String())
		}
	}
}
