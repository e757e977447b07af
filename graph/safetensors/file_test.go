package safetensors

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// dirNames returns the names of the entries of dir.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestWriteRead(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "model.safetensors")
	meta := map[string]string{"format": "pt"}
	for i, tensors := range [][]Tensor{sampleTensors(), sampleTensors()[:2]} {
		if err := Write(path, tensors, meta); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		got, err := Read(path)
		if err != nil {
			t.Fatalf("read %d: %v", i, err)
		}
		assertSameFile(t, got, fileOf(tensors, meta))
	}
	if names := dirNames(t, dir); !reflect.DeepEqual(names, []string{"model.safetensors"}) {
		t.Errorf("directory holds %q, want only the file", names)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want %v", info.Mode().Perm(), os.FileMode(0o644))
	}
}

func TestWriteFailureKeepsOldFile(t *testing.T) {
	good := []Tensor{{Name: "w", DType: U8, Shape: []int{2}, Data: seq(2)}}
	bad := []Tensor{{Name: "w", DType: F32, Shape: []int{2}, Data: seq(2)}}
	tests := []struct {
		name    string
		target  func(t *testing.T, dir string) string
		tensors []Tensor
		want    string
		left    []string
	}{
		{
			name:    "encoding error",
			target:  func(_ *testing.T, dir string) string { return filepath.Join(dir, "old.safetensors") },
			tensors: bad,
			want:    `tensor "w": has 2 bytes`,
			left:    []string{"old.safetensors"},
		},
		{
			name: "destination is a directory",
			target: func(t *testing.T, dir string) string {
				sub := filepath.Join(dir, "sub")
				if err := os.Mkdir(sub, 0o755); err != nil {
					t.Fatal(err)
				}
				return sub
			},
			tensors: good,
			want:    "replace destination",
			left:    []string{"old.safetensors", "sub"},
		},
		{
			name:    "missing directory",
			target:  func(_ *testing.T, dir string) string { return filepath.Join(dir, "missing", "new.safetensors") },
			tensors: good,
			want:    "create temporary file",
			left:    []string{"old.safetensors"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			old := filepath.Join(dir, "old.safetensors")
			if err := Write(old, good, nil); err != nil {
				t.Fatal(err)
			}
			before, err := os.ReadFile(old)
			if err != nil {
				t.Fatal(err)
			}
			path := tt.target(t, dir)
			err = Write(path, tt.tensors, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "write "+path) {
				t.Errorf("error %v, want one about %s containing %q", err, path, tt.want)
			}
			after, err := os.ReadFile(old)
			if err != nil || string(after) != string(before) {
				t.Errorf("old file changed to %q (error %v)", after, err)
			}
			if names := dirNames(t, dir); !reflect.DeepEqual(names, tt.left) {
				t.Errorf("directory holds %q, want %q", names, tt.left)
			}
		})
	}
}

func TestReadErrors(t *testing.T) {
	dir := t.TempDir()
	truncated := filepath.Join(dir, "truncated.safetensors")
	data := rawFile(`{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, make([]byte, 5))
	if err := os.WriteFile(truncated, data, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		want []string
	}{
		{filepath.Join(dir, "missing.safetensors"), []string{"safetensors: open ", "missing.safetensors"}},
		{truncated, []string{"safetensors: read " + truncated, `tensor "w"`, "out of bounds"}},
	}
	for _, tt := range tests {
		f, err := Read(tt.path)
		if err == nil {
			t.Errorf("Read(%s) returned %d tensors, want error", tt.path, len(f.Tensors))
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Read(%s) error %q does not contain %q", tt.path, err, w)
			}
		}
	}
}

// TestReadChecksBeforeReading reads files that would take unbounded memory
// if read whole: each is refused from its size prefix or its kind, before
// the rest is read.
func TestReadChecksBeforeReading(t *testing.T) {
	dir := t.TempDir()
	sparse := filepath.Join(dir, "sparse.safetensors")
	f, err := os.Create(sparse)
	if err != nil {
		t.Fatal(err)
	}
	// A size prefix of 2^40 and a terabyte of holes.
	if _, err := f.Write([]byte{0, 0, 0, 0, 0, 1, 0, 0}); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 40); err != nil {
		t.Skipf("no sparse files here: %v", err)
	}
	f.Close()
	emptyHeader := filepath.Join(dir, "holes.safetensors")
	if err := os.WriteFile(emptyHeader, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(emptyHeader, 1<<40); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ path, want string }{
		{sparse, "header size 1099511627776 is more than the 104857600 bytes a header may have"},
		{emptyHeader, "header JSON"},
		{"/dev/zero", "not a regular file"},
		{dir, "not a regular file"},
	}
	for _, tt := range tests {
		if _, err := os.Stat(tt.path); err != nil {
			continue
		}
		if _, err := Read(tt.path); err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), tt.path) {
			t.Errorf("Read(%s): %v, want an error naming it with %q", tt.path, err, tt.want)
		}
	}
}
