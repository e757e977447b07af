package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/inference"
	"github.com/transformer-go/transformer/trainer"
	"github.com/transformer-go/transformer/trainer/dist"
)

// trainTiny trains a copy-task run of a few updates into dir with args
// added, and fails the test on an error.
func trainTiny(t *testing.T, dir string, args ...string) string {
	t.Helper()
	base := []string{"-steps", "2", "-eval-every", "1", "-max-tokens", "128", "-train-size", "50", "-held-out", "8", "-out", dir}
	var out, errb bytes.Buffer
	if err := run(context.Background(), dist.Alone(), append(base, args...), &out, &errb); err != nil {
		t.Fatal(err, errb.String())
	}
	return errb.String()
}

// TestSyntheticResumeRefusesEditedData edits the settings of a copy-task
// run's run.json that make its data (the task, the seed, the lengths, the
// held-out examples): each resume is refused, as a run on edited files is,
// and leaves run.json as it was; the run's own settings resume.
func TestSyntheticResumeRefusesEditedData(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	trainTiny(t, dir)
	settings := filepath.Join(dir, "run.json")
	good, err := os.ReadFile(settings)
	if err != nil {
		t.Fatal(err)
	}
	for _, edit := range [][2]string{
		{`"task": "copy"`, `"task": "reverse"`}, {`"seed": 1,`, `"seed": 2,`},
		{`"min_len": 1,`, `"min_len": 2,`}, {`"held_out": 8,`, `"held_out": 9,`},
	} {
		bad := bytes.Replace(good, []byte(edit[0]), []byte(edit[1]), 1)
		if bytes.Equal(bad, good) {
			t.Fatalf("run.json lacks %s", edit[0])
		}
		if err := os.WriteFile(settings, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		var out, errb bytes.Buffer
		err := run(context.Background(), dist.Alone(), []string{"-resume", dir, "-steps", "3"}, &out, &errb)
		if err == nil || !strings.Contains(err.Error(), "training or validation data changed since it was saved (data_sha256 differs") {
			t.Errorf("run.json with %s: error %v, want one saying the data changed", edit[1], err)
		}
		if after, _ := os.ReadFile(settings); !bytes.Equal(after, bad) {
			t.Errorf("run.json with %s: the refused resume rewrote it", edit[1])
		}
	}
	if err := os.WriteFile(settings, good, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if err := run(context.Background(), dist.Alone(), []string{"-resume", dir, "-steps", "3"}, &out, &errb); err != nil {
		t.Fatal(err, errb.String())
	}
}

// TestRefusedBeforeAnyWork gives flags that issue 50 found accepted, or
// answered with the whole usage: each is refused, naming it (with its help
// alone), and nothing is made.
func TestRefusedBeforeAnyWork(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-patience", "3", "-steps", "2"}, "-patience 3 has no effect: with -steps 2 and -eval-every 1 the run evaluates 2 times"},
		{[]string{"-patience", "1", "-eval-every", "450"}, "-patience 1 has no effect: with -steps 450 and -eval-every 450 the run evaluates once"},
		{[]string{"-device", "gpu"}, "invalid value \"gpu\" for flag -device: device \"gpu\": want cpu, cuda or auto\n  -device value\n"},
		{[]string{"-device", ""}, "invalid value \"\" for flag -device: empty: want cpu, cuda or auto"},
	} {
		if said := refused(t, tc.args, tc.want); strings.Contains(said, "-optimizer") {
			t.Errorf("%v: said %q, want it without the other flags' help", tc.args, said)
		}
	}
}

// runJSON is the run.json of the run in dir, decoded.
func runJSON(t *testing.T, dir string) map[string]any {
	t.Helper()
	js, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var saved map[string]any
	if err := json.Unmarshal(js, &saved); err != nil {
		t.Fatal(err)
	}
	return saved
}

// TestFilesWarmupIsTheTrainers: a run on files without -warmup warms up
// for the trainer's default, a tenth of the run (the README's language
// model once warmed up for 4,000 of its 1,500 updates), with -steps and
// with -epochs, whose steps come from the data; a warm-up longer than the
// run is warned of.
func TestFilesWarmupIsTheTrainers(t *testing.T) {
	files := writeCorpus(t)
	onFiles := []string{"-task", "files", "-train-src", files[0], "-train-tgt", files[1], "-valid-src", files[2], "-valid-tgt", files[3],
		"-bpe-merges", "30", "-max-tokens", "256", "-bleu-every", "0"}
	for _, c := range []struct {
		args   []string
		warmup float64
		warned bool
	}{
		{[]string{"-steps", "20"}, 2, false},
		{[]string{"-epochs", "30"}, -1, false}, // a tenth of the steps run.json records
		{[]string{"-steps", "4", "-warmup", "50"}, 50, true},
	} {
		dir := filepath.Join(t.TempDir(), "run")
		var out, errb bytes.Buffer
		if err := run(context.Background(), dist.Alone(), append(append(onFiles, c.args...), "-out", dir), &out, &errb); err != nil {
			t.Fatal(c.args, err, errb.String())
		}
		saved := runJSON(t, dir)
		if c.warmup < 0 {
			c.warmup = float64(int(saved["steps"].(float64)) / 10)
		}
		if got := saved["warmup"]; got != c.warmup || c.warmup < 1 {
			t.Errorf("%v: run.json's warmup %v, want %v", c.args, got, c.warmup)
		}
		if warned := strings.Contains(errb.String(), "the warm-up is longer than the run"); warned != c.warned {
			t.Errorf("%v: warned %v, want %v:\n%s", c.args, warned, c.warned, errb.String())
		}
	}
}

// TestLanguageModelTriesFirstWords: the last line of a language model's
// run prompts it with the first words of validation sentences, not whole
// ones, which it would only end with a full stop.
func TestLanguageModelTriesFirstWords(t *testing.T) {
	files := writeCorpus(t)
	out := filepath.Join(t.TempDir(), "run")
	args := []string{"-model", "decoder-only", "-task", "files", "-train-tgt", files[1], "-valid-tgt", files[3], "-bpe-merges", "30",
		"-max-tokens", "256", "-steps", "2", "-out", out}
	var stdout, errb bytes.Buffer
	if err := run(context.Background(), dist.Alone(), args, &stdout, &errb); err != nil {
		t.Fatal(err, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(errb.String()), "\n")
	want := `try="head -n 3 ` + files[3] + ` | cut -d ' ' -f 1-2 | go run github.com/transformer-go/transformer/cmd/translate -model ` + out + ` -method greedy -prompt"`
	if last := lines[len(lines)-1]; !strings.Contains(last, want) {
		t.Errorf("the last line %q does not say %s", last, want)
	}
}

// TestAveragedIsWrittenByDefault: a run without -average writes
// averaged.safetensors, the mean of its last 5 checkpoints as the paper's
// (or of -keep, if fewer), so that translate -checkpoint averaged finds
// it; -average 0 writes none.
func TestAveragedIsWrittenByDefault(t *testing.T) {
	for _, c := range []struct {
		args    []string
		average float64
	}{{nil, 5}, {[]string{"-keep", "2"}, 2}, {[]string{"-average", "0"}, 0}} {
		dir := filepath.Join(t.TempDir(), "run")
		trainTiny(t, dir, c.args...)
		if got := runJSON(t, dir)["average"]; got != c.average {
			t.Errorf("%v: run.json's average %v, want %v", c.args, got, c.average)
		}
		if _, err := os.Stat(filepath.Join(dir, "averaged.safetensors")); (err == nil) != (c.average > 0) {
			t.Errorf("%v: averaged.safetensors: %v", c.args, err)
		}
	}
}

// TestDecoderOnlyRecordsNoEncoder: a decoder-only run's config.json has no
// encoder layers (the preset's 2 were recorded), a run whose config.json
// has them, as older runs do, resumes, and a -config that gives them is
// refused.
func TestDecoderOnlyRecordsNoEncoder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	trainTiny(t, dir, "-model", "decoder-only")
	config := filepath.Join(dir, "config.json")
	js, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(js, []byte(`"encoder_layers": 0,`)) || !bytes.Contains(js, []byte(`"decoder_layers": 2,`)) {
		t.Fatalf("config.json of a decoder-only run:\n%s", js)
	}
	if err := os.WriteFile(config, bytes.Replace(js, []byte(`"encoder_layers": 0,`), []byte(`"encoder_layers": 2,`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if err := run(context.Background(), dist.Alone(), []string{"-resume", dir, "-steps", "3"}, &out, &errb); err != nil {
		t.Fatal("resuming a run whose config.json has the preset's encoder layers:", err, errb.String())
	}
	cfgFile := filepath.Join(t.TempDir(), "c.json")
	if err := os.WriteFile(cfgFile, []byte(`{"encoder_layers": 3}`), 0o644); err != nil {
		t.Fatal(err)
	}
	err = run(context.Background(), dist.Alone(), []string{"-model", "decoder-only", "-config", cfgFile, "-out", filepath.Join(t.TempDir(), "new")}, &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "field encoder_layers has no effect on a decoder-only model") {
		t.Errorf("-config with encoder_layers for a decoder-only model: %v", err)
	}
}

// TestRunJSONRecordsWhatTheRunUsed: a copy-task run's run.json holds the
// label smoothing and dropout its model used, and none of the settings of
// files (a source language, BLEU, a sentence length); a run on files none
// of a synthetic task's.
func TestRunJSONRecordsWhatTheRunUsed(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "copy")
	trainTiny(t, dir)
	saved := runJSON(t, dir)
	if saved["label_smoothing"] != 0.1 || saved["dropout"] != 0.0 {
		t.Errorf("copy run: label_smoothing %v, dropout %v; want the model's 0.1 and 0", saved["label_smoothing"], saved["dropout"])
	}
	for _, field := range []string{"src_lang", "tgt_lang", "max_sentence_len", "bleu_every", "bleu_sample"} {
		if v, ok := saved[field]; ok {
			t.Errorf("copy run: run.json holds %s %v, a setting of files", field, v)
		}
	}
	files := writeCorpus(t)
	dir = filepath.Join(t.TempDir(), "files")
	args := []string{"-task", "files", "-train-src", files[0], "-train-tgt", files[1], "-valid-src", files[2], "-valid-tgt", files[3],
		"-bpe-merges", "30", "-max-tokens", "256", "-steps", "2", "-out", dir}
	var out, errb bytes.Buffer
	if err := run(context.Background(), dist.Alone(), args, &out, &errb); err != nil {
		t.Fatal(err, errb.String())
	}
	saved = runJSON(t, dir)
	if saved["label_smoothing"] != 0.1 || saved["dropout"] != 0.1 || saved["max_sentence_len"] != 100.0 {
		t.Errorf("files run: label_smoothing %v, dropout %v, max_sentence_len %v; want 0.1, 0.1 and 100", saved["label_smoothing"], saved["dropout"], saved["max_sentence_len"])
	}
	for _, field := range []string{"symbols", "min_len", "max_len", "train_size", "held_out", "src_lang", "tgt_lang"} {
		if v, ok := saved[field]; ok {
			t.Errorf("files run without -data: run.json holds %s %v", field, v)
		}
	}
	if err := run(context.Background(), dist.Alone(), []string{"-resume", dir, "-steps", "3"}, &out, &errb); err != nil {
		t.Fatal("resuming the files run:", err)
	}
}

// TestCtrlCExits130: a run that Ctrl-C stopped exits with status 130, the
// shell's for SIGINT, so that a script tells it from a finished run; one
// that SIGTERM or SIGUSR1 stopped (a scheduler's, or mpirun's, request to
// checkpoint and stop) and one that ended exit with 0.
func TestCtrlCExits130(t *testing.T) {
	for _, c := range []struct {
		err, cause error
		want       int
	}{
		{trainer.ErrInterrupted, signalCause{os.Interrupt}, 130},
		{errors.Wrap(trainer.ErrInterrupted, "x"), signalCause{os.Interrupt}, 130},
		{trainer.ErrInterrupted, signalCause{syscall.SIGTERM}, 0},
		{trainer.ErrInterrupted, signalCause{syscall.SIGUSR1}, 0},
		{nil, nil, 0},
		{nil, signalCause{os.Interrupt}, 0}, // the run had ended
	} {
		if got := exitStatus(c.err, c.cause); got != c.want {
			t.Errorf("exitStatus(%v, %v) = %d, want %d", c.err, c.cause, got, c.want)
		}
	}
}

// TestCheckpointsRecordTheLongestSource: a run's weights record the most
// tokens of a source it trained on, which translate warns of passing: a
// copy task's of up to -max-len 10 symbols and EOS.
func TestCheckpointsRecordTheLongestSource(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	trainTiny(t, dir)
	r, err := inference.Load(dir, "final")
	if err != nil {
		t.Fatal(err)
	}
	if r.LongestSource < 2 || r.LongestSource > 11 {
		t.Errorf("the copy task's longest source: %d tokens, want 2 to 11", r.LongestSource)
	}
}
