package atomicfile

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestWriteReplacesWholeWith0644(t *testing.T) {
	for name, write := range map[string]func(string, []byte) error{"WriteBytes": WriteBytes, "WriteScratch": WriteScratch} {
		t.Run(name, func(t *testing.T) { testReplacesWholeWith0644(t, write) })
	}
}

func testReplacesWholeWith0644(t *testing.T, write func(string, []byte) error) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.txt")
	for _, content := range []string{"first", "second, longer"} {
		if err := write(path, []byte(content)); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != content {
			t.Fatalf("read %q, %v; want %q", got, err, content)
		}
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != Mode {
		t.Errorf("mode %v, want %v", st.Mode().Perm(), os.FileMode(Mode))
	}
	assertOnly(t, dir, "f.txt")
}

func TestFailedWriteKeepsOldAndLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.txt")
	if err := WriteBytes(path, []byte("old")); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := Write(path, func(w *bufio.Writer) error {
		w.Write([]byte("half"))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err %v, want boom", err)
	}
	got, _ := os.ReadFile(path)
	if string(got) != "old" {
		t.Errorf("after a failed write the file holds %q, want old", got)
	}
	assertOnly(t, dir, "f.txt")
}

func TestWriteIntoMissingDirectoryNamesThePath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no", "f.txt")
	for _, write := range []func(string, []byte) error{WriteBytes, WriteScratch} {
		err := write(path, nil)
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Fatalf("err %v, want one naming %s", err, path)
		}
	}
}

func TestCleanRemovesOnlyTemporaries(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{".a.json.tmp-123", "a.json", ".hidden", "b.tmp-9"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	removed, err := Clean(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(removed, []string{".a.json.tmp-123"}) {
		t.Errorf("removed %v", removed)
	}
	assertOnly(t, dir, ".hidden", "a.json", "b.tmp-9")
}

func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if !reflect.DeepEqual(got, names) {
		t.Errorf("directory holds %v, want %v", got, names)
	}
}
