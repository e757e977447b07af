package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/transformer-go/transformer/inference"
	"github.com/transformer-go/transformer/internal/cliflag"
	"github.com/transformer-go/transformer/model"
	"github.com/transformer-go/transformer/model/checkpoint"
	"github.com/transformer-go/transformer/trainer"
)

func TestHelpExitsZero(t *testing.T) { cliflag.HelpExitsZero(t, "TestHelpExitsZero", main, "steps") }

// smallCorpus is a tokenizer of a few sentences, for runs that are only
// exported.
func smallCorpus(t *testing.T) corpus {
	t.Helper()
	return newCorpus(t, []string{"ein Hund läuft über die Wiese .", "eine Katze schläft auf dem Sofa .", "a dog runs across the meadow .", "a cat sleeps on the sofa ."}, 30)
}

// smallConfig is a small model of the kind with max_len 24.
func smallConfig(c corpus, kind string) model.Config {
	cfg, _ := model.Preset("tiny", c.tok.Len())
	cfg.Kind, cfg.DModel, cfg.DFF, cfg.MaxLen = kind, 32, 64, 24
	return cfg
}

// listDir is the names in dir, none if it does not exist.
func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestWritesTheFilesOfEachKind exports a run of each kind: the files of
// its kind (inference.ONNXFiles) and nothing else, the defaults cut to
// the model's max_len; a second export is refused unless -force, and the
// refusal changes nothing.
func TestWritesTheFilesOfEachKind(t *testing.T) {
	c := smallCorpus(t)
	want := map[string][]string{
		model.KindEncoderDecoder: {inference.ONNXEncoder, inference.ONNXScorer, inference.ONNXStep},
		model.KindDecoderOnly:    {inference.ONNXScorer, inference.ONNXStep},
		model.KindEncoderOnly:    {inference.ONNXScorer, inference.ONNXTagger},
	}
	for kind, files := range want {
		t.Run(kind, func(t *testing.T) {
			dir, _, _ := writeRun(t, c, smallConfig(c, kind))
			out := filepath.Join(t.TempDir(), "onnx")
			var stdout bytes.Buffer
			if err := run([]string{"-model", dir, "-out", out}, &stdout); err != nil {
				t.Fatal(err)
			}
			if got := listDir(t, out); !slices.Equal(got, files) {
				t.Fatalf("wrote %v, want %v", got, files)
			}
			before, err := os.ReadFile(filepath.Join(out, files[0]))
			if err != nil {
				t.Fatal(err)
			}
			if steps := `"steps": 24`; strings.Contains(string(before), steps) != (kind != model.KindEncoderOnly) {
				t.Errorf("%s records %s: %t, want it for a model that decodes (the default cut to max_len 24)", files[0], steps, !strings.Contains(string(before), steps))
			}
			err = run([]string{"-model", dir, "-out", out, "-batch", "2"}, &stdout)
			if err == nil || !strings.Contains(err.Error(), "-force") {
				t.Fatalf("a second export: %v, want a refusal naming -force", err)
			}
			if after, _ := os.ReadFile(filepath.Join(out, files[0])); !bytes.Equal(before, after) {
				t.Error("the refused export changed a file")
			}
			if err := run([]string{"-model", dir, "-out", out, "-batch", "2", "-force"}, &stdout); err != nil {
				t.Fatal(err)
			}
			if after, _ := os.ReadFile(filepath.Join(out, files[0])); bytes.Equal(before, after) {
				t.Errorf("-force -batch 2: %s unchanged", files[0])
			}
			if got := listDir(t, out); !slices.Equal(got, files) {
				t.Errorf("after -force: %v, want %v", got, files)
			}
		})
	}
}

// TestRefusesBeforeWriting checks mistaken commands and runs that do not
// export: each is an error naming what is wrong, and nothing is written.
func TestRefusesBeforeWriting(t *testing.T) {
	c := smallCorpus(t)
	dir, m, params := writeRun(t, c, smallConfig(c, model.KindEncoderDecoder))
	tagger, _, _ := writeRun(t, c, smallConfig(c, model.KindEncoderOnly))
	// A run of a variant that no registry of the command's has.
	own := t.TempDir()
	cfg := m.Config()
	cfg.FFN = "nobias"
	for _, err := range []error{trainer.SaveTokenizer(c.tok, own), checkpoint.Save(filepath.Join(own, "best.safetensors"), cfg, params, c.tok.Fingerprints())} {
		if err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no flags", nil, "-model and -out are required"},
		{"no -out", []string{"-model", dir}, "-model and -out are required"},
		{"stray argument", []string{"-model", dir, "-out", "OUT", "extra"}, `unexpected arguments ["extra"]`},
		{"no rows", []string{"-model", dir, "-out", "OUT", "-batch", "0"}, "-batch 0"},
		{"no source positions", []string{"-model", dir, "-out", "OUT", "-src-len", "0"}, "-src-len 0"},
		{"negative steps", []string{"-model", dir, "-out", "OUT", "-steps", "-5"}, "-steps -5"},
		{"steps above max_len", []string{"-model", dir, "-out", "OUT", "-steps", "25"}, "-steps 25: above the model's max_len 24"},
		{"no run", []string{"-model", filepath.Join(dir, "missing"), "-out", "OUT"}, "not a directory of cmd/train"},
		{"-out a file", []string{"-model", dir, "-out", file}, "is a file"},
		{"-out inside the run", []string{"-model", dir, "-out", filepath.Join(dir, "onnx")}, "is inside the run directory"},
		{"-out the run", []string{"-model", dir, "-out", dir}, "is inside the run directory"},
		{"no checkpoint", []string{"-model", dir, "-out", "OUT", "-checkpoint", "final"}, "final.safetensors"},
		{"a variant of one's own", []string{"-model", own, "-out", "OUT"}, "nobias"},
		{"steps of a tagger", []string{"-model", tagger, "-out", "OUT", "-steps", "8"}, "-steps: a model of kind encoder-only has no such graph"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "onnx")
			args := slices.Clone(tc.args)
			if i := slices.Index(args, "OUT"); i >= 0 {
				args[i] = out
			}
			var stdout bytes.Buffer
			err := run(args, &stdout)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v: %v, want an error with %q", tc.args, err, tc.want)
			}
			if names := listDir(t, out); len(names) > 0 || stdout.Len() > 0 {
				t.Errorf("%v wrote %v and printed %q", tc.args, names, stdout.String())
			}
		})
	}
}
