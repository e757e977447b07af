package model

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoadConfig reads config files over the tiny preset: each is refused
// with an error or gives a config that validates and whose footprint is
// not negative, never a panic.
func FuzzLoadConfig(f *testing.F) {
	for _, s := range []string{`{"max_len": 8}`, `{"d_model": 64, "heads": 4}`, `{"d_ff": 1000000000000}`, `{"kind": "decoder-only"}`,
		`{"positions": "learned", "max_len": 1048576}`, `{}`, `{"dropout": NaN}`, `{"x": 1}`} {
		f.Add([]byte(s))
	}
	base, err := Preset("tiny", 100)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, js []byte) {
		path := filepath.Join(t.TempDir(), "config.json")
		if err := os.WriteFile(path, js, 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := LoadConfig(path, base)
		if err != nil {
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("LoadConfig accepted a config that Validate refuses: %v", err)
		}
		if fp := c.Footprint(4, 1024); fp.Params < 0 || fp.Training < 0 {
			t.Fatalf("footprint %+v of %s", fp, js)
		}
	})
}
