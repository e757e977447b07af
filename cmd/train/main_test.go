package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/model"
	"github.com/transformer-go/transformer/model/checkpoint"
	"github.com/transformer-go/transformer/trainer"
	"github.com/transformer-go/transformer/trainer/dist"
	"github.com/transformer-go/transformer/trainer/rundir"
)

// TestBinaryStarts builds the command and runs it: an old dependency
// (go4.org/unsafe/assume-no-moving-gc) once made every binary panic at start.
func TestBinaryStarts(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "train")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	tests := []struct {
		preset, want string
	}{
		{"base", "parameters: 63082496"},
		{"big", "parameters: 214245376"},
	}
	for _, tc := range tests {
		out, err := exec.Command(bin, "-preset", tc.preset, "-vocab-size", "37000", "-summary").CombinedOutput()
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if last := lines[len(lines)-1]; last != tc.want {
			t.Errorf("-preset %s: last line %q, want %q", tc.preset, last, tc.want)
		}
	}
}

func TestBadFlags(t *testing.T) {
	hugeConfig := filepath.Join(t.TempDir(), "huge.json")
	layersConfig := filepath.Join(t.TempDir(), "layers.json")
	os.WriteFile(hugeConfig, []byte(`{"d_ff": 1000000000000}`), 0o644)
	os.WriteFile(layersConfig, []byte(`{"encoder_layers": 1000000000}`), 0o644)
	// Within every limit, but petabytes of memory: refused before -out is made.
	memoryConfig := filepath.Join(t.TempDir(), "memory.json")
	os.WriteFile(memoryConfig, []byte(`{"d_model": 65536, "d_ff": 262144, "encoder_layers": 1024, "decoder_layers": 1024}`), 0o644)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-steps", "5", "-epochs", "2"}, "not both"},
		{[]string{"-task", "files"}, "-data DIR"},
		{[]string{"-task", "shuffle"}, "copy"},
		{[]string{"-task", "files", "-data", "d", "-train-src", "x"}, "not both"},
		{[]string{"-task", "files", "-data", "d", "-symbols", "5"}, "-symbols has no effect with -task files"},
		{[]string{"-task", "reverse", "-bpe-merges", "10"}, "-bpe-merges has no effect with -task reverse"},
		{[]string{"-vocab-size", "100"}, "-vocab-size 100 has no effect without -summary"},
		{[]string{"-resume", "nowhere", "-dropout", "0.2"}, "only -steps"},
		{[]string{"-resume", filepath.Join(t.TempDir(), "none")}, "not a training output directory"},
		{[]string{"-preset", "huge", "-summary"}, "base, big, small, tiny"},
		{[]string{"-vocab-size", "-1", "-summary"}, "-vocab-size -1: want 0 (the task's) or a number from 5 to 16777216"},
		{[]string{"-symbols", "0", "-summary"}, "-symbols 0"},
		{[]string{"-symbols", "0"}, "-symbols 0"},
		{[]string{"stray"}, "unexpected arguments"},
		{[]string{"-patience", "-1"}, "-patience -1"},
		{[]string{"-device", "tpu"}, `device "tpu": want cpu, cuda or auto`},
		{[]string{"-precision", "fp8"}, `precision "fp8": want float32 or bf16`},
		{[]string{"-lr-factor", "NaN"}, "-lr-factor NaN"},
		{[]string{"-dropout", "NaN"}, "-dropout NaN"},
		{[]string{"-dropout", "-0.5"}, "-dropout -0.5"},
		{[]string{"-clip", "NaN"}, "-clip NaN"},
		{[]string{"-cooldown", "1.5"}, "-cooldown 1.5: want a number in [0, 1)"},
		{[]string{"-cooldown", "NaN"}, "-cooldown NaN"},
		{[]string{"-epochs", "NaN"}, "-epochs NaN"},
		{[]string{"-epochs", "+Inf"}, "-epochs +Inf"},
		{[]string{"-train-size", "-1"}, "-train-size -1"},
		{[]string{"-train-size", "1000000000"}, "-train-size 1000000000"},
		{[]string{"-average", "-3"}, "-average -3"},
		{[]string{"-average", "9", "-keep", "5"}, "-average 9: want a number from 0 to 5"},
		{[]string{"-task", "files", "-train-src", "a", "-train-tgt", "b", "-valid-src", "c", "-valid-tgt", "d", "-steps", "5", "-max-sentence-len", "-5"}, "-max-sentence-len -5"},
		{[]string{"-max-tokens", "-5"}, "-max-tokens -5"},
		{[]string{"-label-smoothing", "1"}, "-label-smoothing 1"},
		{[]string{"-config", hugeConfig}, "d_ff is 1000000000000"},
		{[]string{"-config", layersConfig}, "encoder_layers is 1000000000"},
		{[]string{"-config", memoryConfig}, "model too large: decoder_layers = 1024"},
		{[]string{"-precision", "fp16"}, `-precision: precision "fp16": want float32 or bf16`},
		{[]string{"-model", "gpt"}, `-model "gpt": want one of encoder-decoder, decoder-only, encoder-only`},
		{[]string{"-task", "files", "-model", "decoder-only", "-train-tgt", "a", "-steps", "5"}, "-train-tgt and -valid-tgt alone will do"},
		{[]string{"-task", "files", "-model", "encoder-only", "-data", "d", "-steps", "5", "-keep-best", "bleu"}, "-keep-best bleu needs a model that translates sources"},
	}
	for _, tc := range tests {
		refused(t, tc.args, tc.want)
	}
}

// refused runs cmd/train with args and, unless they resume a run or give
// -summary (which take no -out), -out a fresh path: the run must fail
// with an error saying want, and make nothing at that path. It returns
// what the run said: its error's text, then what it wrote to stdout and
// stderr.
func refused(t *testing.T, args []string, want string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	given := args
	if args[0] != "-resume" && !slices.Contains(args, "-summary") {
		given = slices.Concat(args, []string{"-out", out})
	}
	var stdout, errb bytes.Buffer
	err := run(context.Background(), dist.Alone(), given, &stdout, &errb)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%v: error %v, want one saying %q", args, err, want)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%v: the refused run made %s", args, out)
	}
	said := stdout.String() + errb.String()
	if err != nil {
		said = err.Error() + said
	}
	return said
}

// TestBatchBudgetNamesTheFlags gives -max-tokens less than the longest
// example needs: the error names -max-tokens, the least that fits, and the
// flag that bounds the examples' length.
func TestBatchBudgetNamesTheFlags(t *testing.T) {
	files := writeCorpus(t)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-max-tokens", "1"}, "-max-tokens 1: the longest example takes 12 positions (padded to its length bucket), more than a batch holds; raise -max-tokens to at least 12, or lower -max-len"},
		{[]string{"-max-tokens", "1", "-model", "decoder-only"}, "raise -max-tokens to at least 24, or lower -max-len"},
		{[]string{"-max-tokens", "2", "-task", "files", "-train-src", files[0], "-train-tgt", files[1], "-valid-src", files[2], "-valid-tgt", files[3], "-bpe-merges", "30"},
			"-max-tokens 2: the longest example takes 24 positions (padded to its length bucket), more than a batch holds; raise -max-tokens to at least 24, or lower -max-sentence-len"},
	}
	for _, tc := range tests {
		var stdout, errb bytes.Buffer
		args := append(tc.args, "-steps", "1", "-out", filepath.Join(t.TempDir(), "out"))
		err := run(context.Background(), dist.Alone(), args, &stdout, &errb)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one saying %q", tc.args, err, tc.want)
		}
	}
}

// TestRunDirectoryIsProtected runs twice into one directory, overwrites,
// and resumes with bad settings: a finished run is never lost by accident.
func TestRunDirectoryIsProtected(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	args := []string{"-steps", "2", "-max-tokens", "128", "-train-size", "50", "-held-out", "8", "-out", dir}
	var out, errb bytes.Buffer
	if err := run(context.Background(), dist.Alone(), args, &out, &errb); err != nil {
		t.Fatal(err, errb.String())
	}
	final := filepath.Join(dir, "final.safetensors")
	before, _ := os.ReadFile(final)
	err := run(context.Background(), dist.Alone(), append(args, "-seed", "7"), &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "holds a run: continue it with -resume") {
		t.Fatalf("second run into a finished run's directory: %v", err)
	}
	if after, _ := os.ReadFile(final); !bytes.Equal(before, after) {
		t.Fatal("the refused run changed final.safetensors")
	}
	settings, _ := os.ReadFile(filepath.Join(dir, "run.json"))
	if err := run(context.Background(), dist.Alone(), []string{"-resume", dir, "-steps", "1"}, &out, &errb); err == nil ||
		!strings.Contains(err.Error(), "past this run's last step 1") {
		t.Fatalf("resume to fewer steps than done: %v", err)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "run.json")); !bytes.Equal(settings, after) {
		t.Fatal("a failed resume rewrote run.json")
	}
	bad := bytes.Replace(settings, []byte(`"train_size": 50`), []byte(`"train_size": -1`), 1)
	if err := os.WriteFile(filepath.Join(dir, "run.json"), bad, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), dist.Alone(), []string{"-resume", dir}, &out, &errb); err == nil ||
		!strings.Contains(err.Error(), "run.json: field train_size: -train-size -1") {
		t.Fatalf("resume of a run.json with train_size -1: %v", err)
	}
	if err := run(context.Background(), dist.Alone(), append(args, "-seed", "7", "-overwrite"), &out, &errb); err != nil {
		t.Fatalf("-overwrite: %v", err)
	}
	if ms, err := trainer.ReadMetrics(filepath.Join(dir, "metrics.jsonl")); err != nil || len(ms) != 2 {
		t.Fatalf("metrics after -overwrite: %d lines, %v; want the new run's 2", len(ms), err)
	}
}

// TestResumeChecksTheRun resumes runs whose run.json or checkpoints were
// spoiled: each is refused with an error naming the file and the field,
// leaving run.json as it was, or falls back with a warning naming the
// checkpoint skipped (without a stack trace).
func TestResumeChecksTheRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	args := []string{"-steps", "2", "-eval-every", "1", "-max-tokens", "128", "-train-size", "50", "-held-out", "8", "-out", dir}
	var out, errb bytes.Buffer
	if err := run(context.Background(), dist.Alone(), args, &out, &errb); err != nil {
		t.Fatal(err, errb.String())
	}
	settings := filepath.Join(dir, "run.json")
	good, err := os.ReadFile(settings)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ old, new, want string }{
		{`"keep_best": "loss"`, `"keep_best": "lost"`, `field keep_best: -keep-best "lost": want loss or bleu`},
		{`"task": "copy"`, `"task": "files"`, "field task: -task files: want train_src, train_tgt, valid_src and valid_tgt"},
		{`"task": "copy"`, `"task": "copi"`, `field task: -task: unknown task "copi"`},
		{`"preset": "tiny"`, `"preset": "tiny "`, `field preset: -preset: unknown preset "tiny "`},
		{`"held_out": 8`, `"held_out": -8`, "field held_out: -held-out -8: want a number from 1"},
		{`"keep_best": "loss"`, `"keep_best": "loss", "seed": 2`, `field "seed" appears twice`},
		{"}\n", "}\n{}\n", "more after the JSON object"},
	} {
		bad := bytes.Replace(good, []byte(tc.old), []byte(tc.new), 1)
		if bytes.Equal(bad, good) {
			t.Fatalf("run.json lacks %s", tc.old)
		}
		if err := os.WriteFile(settings, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		err := run(context.Background(), dist.Alone(), []string{"-resume", dir, "-steps", "3"}, &out, &errb)
		if err == nil || !strings.Contains(err.Error(), settings+": "+tc.want) {
			t.Errorf("run.json with %s: error %v, want %q", tc.new, err, tc.want)
		}
		if after, _ := os.ReadFile(settings); !bytes.Equal(after, bad) {
			t.Errorf("run.json with %s: the refused resume rewrote it", tc.new)
		}
	}
	if err := os.WriteFile(settings, good, 0o644); err != nil {
		t.Fatal(err)
	}
	newest := filepath.Join(dir, "checkpoints", "step-00000002.safetensors")
	if err := os.Truncate(newest, 100); err != nil {
		t.Fatal(err)
	}
	errb.Reset()
	if err := run(context.Background(), dist.Alone(), []string{"-resume", dir, "-steps", "3"}, &out, &errb); err != nil {
		t.Fatal(err, errb.String())
	}
	log := errb.String()
	if !strings.Contains(log, `msg="skipped a checkpoint that does not load" error="safetensors: read `+newest+": ") ||
		!strings.Contains(log, "msg=resumed step=1") || strings.Contains(log, ".go:") {
		t.Errorf("log of a resume past a torn checkpoint:\n%s", log)
	}
	if err := os.RemoveAll(filepath.Join(dir, "checkpoints")); err != nil {
		t.Fatal(err)
	}
	err = run(context.Background(), dist.Alone(), []string{"-resume", dir}, &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "has no checkpoint to resume: the run stopped before saving its first; start it over with -out "+dir+" -overwrite") {
		t.Errorf("resume without checkpoints: %v", err)
	}
	// -epochs that make more steps than a run.json may hold: refused, not
	// saved as a run that no -resume would take (nor trained for ever: the
	// context stops a run that was not refused).
	epochs := filepath.Join(t.TempDir(), "epochs")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = run(ctx, dist.Alone(), []string{"-epochs", "1e9", "-max-tokens", "128", "-train-size", "50", "-held-out", "8", "-out", epochs}, &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "-epochs 1e+09: ") || rundir.IsRun(epochs) {
		t.Errorf("-epochs 1e9: %v", err)
	}
}

func TestTrainAndResume(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	args := []string{"-steps", "4", "-max-tokens", "128", "-train-size", "200", "-held-out", "16", "-out", dir, "-eval-every", "2"}
	var out, errb bytes.Buffer
	if err := run(context.Background(), dist.Alone(), args, &out, &errb); err != nil {
		t.Fatal(err, errb.String())
	}
	cpu, mem := filepath.Join(t.TempDir(), "cpu.pprof"), filepath.Join(t.TempDir(), "mem.pprof")
	resume := []string{"-resume", dir, "-steps", "6", "-cpuprofile", cpu, "-memprofile", mem}
	if err := run(context.Background(), dist.Alone(), resume, &out, &errb); err != nil {
		t.Fatal(err, errb.String())
	}
	for _, p := range []string{cpu, mem} {
		if fi, err := os.Stat(p); err != nil || fi.Size() == 0 {
			t.Errorf("profile %s: %v", p, err)
		}
	}
	ms, err := trainer.ReadMetrics(filepath.Join(dir, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 3 || ms[2].Step != 6 || ms[2].ExactMatch == nil {
		t.Fatalf("metrics %+v", ms)
	}
	log := errb.String()
	for _, want := range []string{"resumed", "step=4", "exact_match", "activation_memory_mb", "done"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
}

// TestPrecisionIsKept trains with bf16 products: run.json records the
// precision, and a resume keeps it.
func TestPrecisionIsKept(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	args := []string{"-precision", "bf16", "-steps", "2", "-max-tokens", "128", "-train-size", "200", "-held-out", "16", "-out", dir}
	var out, errb bytes.Buffer
	if err := run(context.Background(), dist.Alone(), args, &out, &errb); err != nil {
		t.Fatal(err, errb.String())
	}
	if js, _ := os.ReadFile(filepath.Join(dir, "run.json")); !strings.Contains(string(js), `"precision": "bf16"`) {
		t.Fatalf("run.json lacks the precision:\n%s", js)
	}
	errb.Reset()
	if err := run(context.Background(), dist.Alone(), []string{"-resume", dir, "-steps", "3"}, &out, &errb); err != nil {
		t.Fatal(err, errb.String())
	}
	if !strings.Contains(errb.String(), "precision=bf16") {
		t.Errorf("the resumed run's log does not say precision=bf16:\n%s", errb.String())
	}
	if err := run(context.Background(), dist.Alone(), []string{"-resume", dir, "-precision", "float32"}, &out, &errb); err == nil {
		t.Error("-resume with -precision: no error")
	}
}

// multi30k is the shared data directory, beside the project.
const multi30k = "../../../shared/data/multi30k"

// TestMulti30kShortRun trains briefly on real German–English data and checks
// that the validation loss falls well below where it started.
func TestMulti30kShortRun(t *testing.T) {
	if _, err := os.Stat(multi30k); err != nil {
		msg := "Multi30k not found at " + multi30k + " (see ../shared/README.md)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	if testing.Short() {
		t.Skip("a few minutes of training; skipped with -short")
	}
	dir := filepath.Join(t.TempDir(), "run")
	args := []string{"-task", "files", "-data", multi30k, "-preset", "tiny", "-bpe-merges", "4000",
		"-steps", "240", "-max-tokens", "1024", "-warmup", "200", "-eval-every", "40", "-bleu-every", "100", "-out", dir}
	var out, errb bytes.Buffer
	if err := run(context.Background(), dist.Alone(), args, &out, &errb); err != nil {
		t.Fatal(err, errb.String())
	}
	ms, err := trainer.ReadMetrics(filepath.Join(dir, "metrics.jsonl"))
	if err != nil || len(ms) != 6 {
		t.Fatalf("metrics %+v, %v", ms, err)
	}
	first, last := ms[0], ms[len(ms)-1]
	t.Logf("validation loss %.3f (ppl %.1f) at step %d → %.3f (ppl %.1f) at step %d, %.0f tokens/s",
		first.ValLoss, first.ValPPL, first.Step, last.ValLoss, last.ValPPL, last.Step, last.TokensPerS)
	if last.BLEU == nil {
		t.Error("no BLEU at the last evaluation")
	}
	if !(last.ValLoss < first.ValLoss-1) {
		t.Fatalf("validation loss fell from %.3f to %.3f only", first.ValLoss, last.ValLoss)
	}
}

// TestDecoderOnlyRuns trains a decoder-only model on the built-in copy
// task (joined source EOS target) and as a language model of text alone:
// the metrics have perplexity (and exact match on the task), the checkpoint
// rebuilds as a decoder-only model, and a run resumes with its kind.
func TestDecoderOnlyRuns(t *testing.T) {
	dir := t.TempDir()
	text := "a dog runs .\na cat sleeps on the sofa .\ntwo children play in the park .\n"
	for _, name := range []string{"train.en", "val.en"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name       string
		args       []string
		exactMatch bool
	}{
		{"copy task", []string{"-train-size", "200", "-held-out", "16"}, true},
		{"text", []string{"-task", "files", "-data", dir, "-src-lang", "", "-bpe-merges", "20"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			args := append([]string{"-model", "decoder-only", "-steps", "4", "-max-tokens", "256", "-out", out}, tc.args...)
			var stdout, errb bytes.Buffer
			if err := run(context.Background(), dist.Alone(), args, &stdout, &errb); err != nil {
				t.Fatal(err, errb.String())
			}
			ms, err := trainer.ReadMetrics(filepath.Join(out, "metrics.jsonl"))
			if err != nil || len(ms) == 0 {
				t.Fatalf("metrics: %d, %v", len(ms), err)
			}
			last := ms[len(ms)-1]
			if !(last.ValPPL > 1) || (last.ExactMatch != nil) != tc.exactMatch || last.BLEU != nil {
				t.Fatalf("metrics %+v: want perplexity, exact match %t, no BLEU", last, tc.exactMatch)
			}
			m, _, err := checkpoint.Load(filepath.Join(out, "final.safetensors"), tensor.Float32, nil)
			if err != nil {
				t.Fatal(err)
			}
			if m.Config().Kind != model.KindDecoderOnly || m.Layout().Sources {
				t.Fatalf("the checkpoint rebuilt as a %s model reading sources %t", m.Config().Kind, m.Layout().Sources)
			}
			if err := run(context.Background(), dist.Alone(), []string{"-resume", out, "-steps", "6"}, &stdout, &errb); err != nil {
				t.Fatal(err, errb.String())
			}
		})
	}
}
