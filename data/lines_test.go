package data

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// gzipped compresses text.
func gzipped(t testing.TB, text string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write([]byte(text)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestLineReaderRefuses(t *testing.T) {
	long := strings.Repeat("x", MaxLineBytes+1)
	text := strings.Repeat("ein Hund läuft über die Wiese\n", 2000)
	corrupt := gzipped(t, text)
	for i := len(corrupt) / 2; i < len(corrupt)/2+16; i++ {
		corrupt[i] ^= 0x55
	}
	tests := []struct {
		name  string
		input io.Reader
		want  string
	}{
		{"line too long", strings.NewReader("ok\n" + long + "\n"), "in:2: line longer than 1048576 bytes"},
		{"no line breaks", io.LimitReader(zeros{}, 8<<20), "in:1: line longer than 1048576 bytes"},
		{"gzip corrupt midway", bytes.NewReader(corrupt), "in: corrupt gzip data"},
		{"gzip line too long", bytes.NewReader(gzipped(t, long)), "in:1: line longer than"},
		{"invalid UTF-8", strings.NewReader("ok\n\xff\n"), "in:2: invalid UTF-8"},
	}
	for _, tt := range tests {
		lr, err := NewLineReader("in", tt.input)
		for err == nil {
			var ok bool
			if _, ok, err = lr.Next(); !ok && err == nil {
				break
			}
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
		}
	}
}

// zeros reads as /dev/zero does.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func TestLineReaderKeepsLinesAtTheCap(t *testing.T) {
	longest := strings.Repeat("é", MaxLineBytes/2)
	lr, _ := NewLineReader("in", strings.NewReader(longest+"\r\nlast"))
	for _, want := range []string{longest, "last"} {
		got, ok, err := lr.Next()
		if err != nil || !ok || got != want {
			t.Fatalf("line of %d bytes: %v, %v (got %d bytes)", len(want), ok, err, len(got))
		}
	}
}

func TestMissingFileNamedOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing.de")
	_, _, err := ReadParallel(path, path, ReadOptions{})
	if err == nil || strings.Count(err.Error(), path) != 1 {
		t.Fatalf("error %v, want one naming %s once", err, path)
	}
}

func TestEmptyCorpusNamesTheFiles(t *testing.T) {
	dir := t.TempDir()
	src, tgt := filepath.Join(dir, "a.de"), filepath.Join(dir, "a.en")
	os.WriteFile(src, []byte("\n  \n"), 0o644)
	os.WriteFile(tgt, []byte("x\n\n"), 0o644)
	_, _, err := ReadParallel(src, tgt, ReadOptions{})
	if err == nil || !strings.Contains(err.Error(), src+" and "+tgt+": no sentence pairs (2 read, 2 empty, 0 too long)") {
		t.Fatalf("error %v", err)
	}
}

// FuzzReadParallel reads arbitrary source and target files, plain or
// gzip-compressed: every input gives pairs or an error, never a panic or a
// hang, and every pair kept is valid UTF-8 without line breaks.
func FuzzReadParallel(f *testing.F) {
	for _, name := range []string{"pairs", "badutf8", "three"} {
		src, _ := os.ReadFile(filepath.Join("testdata", name+".de"))
		f.Add(src, []byte("a\nb\nc\n"), false)
	}
	f.Add([]byte("ein Hund\n"), []byte("a dog\n"), true)
	f.Add([]byte("\r\n\n"), []byte("x\r\ny"), true)
	f.Fuzz(func(t *testing.T, src, tgt []byte, gz bool) {
		dir := t.TempDir()
		if gz {
			src = gzipped(t, string(src))
		}
		sp, tp := filepath.Join(dir, "src"), filepath.Join(dir, "tgt")
		os.WriteFile(sp, src, 0o644)
		os.WriteFile(tp, tgt, 0o644)
		pairs, _, err := ReadParallel(sp, tp, ReadOptions{MaxLen: 50})
		if err != nil {
			return
		}
		for _, p := range pairs {
			if strings.ContainsAny(p.Src+p.Tgt, "\n") {
				t.Fatalf("pair %q holds a line break", p)
			}
		}
	})
}

// FuzzReadTSV reads arbitrary bytes as a tab-separated corpus.
func FuzzReadTSV(f *testing.F) {
	for _, name := range []string{"pairs.tsv", "notab.tsv", "threefields.tsv", "badutf8.tsv"} {
		data, _ := os.ReadFile(filepath.Join("testdata", name))
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "c.tsv")
		os.WriteFile(path, data, 0o644)
		pairs, _, err := ReadTSV(path, ReadOptions{})
		if err == nil && len(pairs) == 0 {
			t.Fatal("no pairs and no error")
		}
	})
}

// FuzzReadText reads arbitrary bytes as plain text: every input gives
// sentences or an error, and every sentence kept is a target without line
// breaks, not empty, beside an empty source.
func FuzzReadText(f *testing.F) {
	for _, name := range []string{"pairs.en", "badutf8.en", "two.en", "pairs.en.gz", "truncated.gz"} {
		data, _ := os.ReadFile(filepath.Join("testdata", name))
		f.Add(data)
	}
	f.Add([]byte("\n \n\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "text")
		os.WriteFile(path, data, 0o644)
		pairs, _, err := ReadText(path, ReadOptions{MaxLen: 50})
		if err == nil && len(pairs) == 0 {
			t.Fatal("no sentences and no error")
		}
		for _, p := range pairs {
			if p.Src != "" || strings.TrimSpace(p.Tgt) == "" || strings.ContainsAny(p.Tgt, "\n") {
				t.Fatalf("sentence %q", p)
			}
		}
	})
}

func TestReadText(t *testing.T) {
	pairs, stats, err := ReadText(filepath.Join("testdata", "pairs.en.gz"), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	if err := ReadLines(filepath.Join("testdata", "pairs.en"), func(line string, _ int) error { want = append(want, line); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(pairs) != len(want) || stats.Kept != len(want) {
		t.Fatalf("%d sentences (%+v), want %d", len(pairs), stats, len(want))
	}
	for i, p := range pairs {
		if p.Src != "" || p.Tgt != want[i] {
			t.Fatalf("sentence %d: %q, want %q", i, p, want[i])
		}
	}
	_, _, err = ReadText(filepath.Join("testdata", "badutf8.de"), ReadOptions{})
	if err == nil || !strings.Contains(err.Error(), "badutf8.de:") || !strings.Contains(err.Error(), "invalid UTF-8") {
		t.Fatalf("invalid UTF-8: %v", err)
	}
}
