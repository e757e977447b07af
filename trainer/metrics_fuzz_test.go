package trainer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzReadMetrics reads metrics.jsonl files, strictly and as a resume
// repairs them: an error or metrics, never a panic; a repair drops at
// most the last line.
func FuzzReadMetrics(f *testing.F) {
	for _, s := range []string{"{\"step\":1,\"val_loss\":2.5}\n{\"step\":2,\"val_loss\":2}\n", "{\"step\":1}\n{\"ste", "\n\n", "x\n", "{\"step\":1e999}\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		path := filepath.Join(t.TempDir(), "metrics.jsonl")
		if err := os.WriteFile(path, text, 0o644); err != nil {
			t.Fatal(err)
		}
		strict, errStrict := ReadMetrics(path)
		repaired, torn, err := readMetrics(path, true)
		if errStrict == nil && (err != nil || torn && len(repaired) != len(strict)-1 || !torn && len(repaired) != len(strict)) {
			t.Fatalf("strict read of %d lines; repair: %d lines, torn %v, %v", len(strict), len(repaired), torn, err)
		}
	})
}

// TestReadMetricsBounded refuses a metrics.jsonl that is a device or
// larger than MaxMetricsBytes before reading it (a 64 GB sparse file in
// its place was read whole on resume).
func TestReadMetricsBounded(t *testing.T) {
	huge := filepath.Join(t.TempDir(), "metrics.jsonl")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(64 << 30); err != nil {
		f.Close()
		t.Skipf("no sparse files here: %v", err)
	}
	f.Close()
	for path, want := range map[string]string{huge: "more than the 1073741824 a run's metrics may have", "/dev/zero": "is not a regular file"} {
		if _, err := ReadMetrics(path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ReadMetrics(%s): %v, want an error holding %q", path, err, want)
		}
		if _, err := truncateMetrics(path, 1); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("truncateMetrics(%s): %v, want an error holding %q", path, err, want)
		}
	}
}
