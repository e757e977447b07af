package main

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoadSettings reads run.json files: each is refused with an error or
// gives settings that pass the checks of a new run's, never a panic.
func FuzzLoadSettings(f *testing.F) {
	for _, s := range []string{
		`{"task":"copy","symbols":10,"min_len":1,"max_len":10,"train_size":50,"held_out":8,"max_sentence_len":100,"bpe_merges":8000,"keep_best":"loss","preset":"tiny","dropout":0,"label_smoothing":-1,"steps":2,"epochs":0,"max_tokens":128,"warmup":100,"lr_factor":0.5,"clip":1,"accumulate":1,"seed":1,"eval_every":1,"save_every":0,"keep":5,"average":0,"out":"x"}`,
		`{"task":"files","train_src":"a","train_tgt":"b","valid_src":"c","valid_tgt":"d","preset":"tiny","keep":5,"accumulate":1,"min_len":1,"max_len":10,"symbols":1,"train_size":1,"held_out":1,"max_sentence_len":1,"lr_factor":1}`,
		`{"steps": -1}`, `{}`, `[]`, `{"epochs": 1e999}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, js []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "run.json"), js, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := loadSettings(dir)
		if err != nil {
			return
		}
		if err := s.check(); err != nil {
			t.Fatalf("loadSettings accepted settings that check refuses: %v", err)
		}
		if s.Out != dir {
			t.Fatalf("out %q, want the directory %q", s.Out, dir)
		}
	})
}
