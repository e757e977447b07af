package trainer

import (
	"os"
	"path/filepath"
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
