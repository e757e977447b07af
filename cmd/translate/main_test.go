package main

import (
	"bytes"
	"compress/gzip"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/data"
	"github.com/transformer-go/transformer/model"
	"github.com/transformer-go/transformer/model/checkpoint"
)

var sentences = []string{
	"ein Hund läuft über die Wiese .", "eine Katze schläft auf dem Sofa .", "zwei Kinder spielen im Park .",
	"a dog runs across the meadow .", "a cat sleeps on the sofa .", "two children play in the park .",
}

// writeRun writes what cmd/train leaves in its output directory, for a tiny
// untrained encoder-decoder: bpe.txt, vocab.txt, config.json and
// best.safetensors.
func writeRun(t *testing.T, positions string) string {
	t.Helper()
	return writeRunOf(t, model.KindEncoderDecoder, positions)
}

// writeRunOf is writeRun for a model of the given kind.
func writeRunOf(t *testing.T, kind, positions string) string {
	t.Helper()
	return writeRunMaxLen(t, kind, positions, 24, 40)
}

// writeRunMaxLen is writeRunOf for a model of the given max_len, with a
// BPE of the given number of merges.
func writeRunMaxLen(t *testing.T, kind, positions string, maxLen, merges int) string {
	t.Helper()
	dir := t.TempDir()
	bpe, err := data.LearnBPE(sentences, merges)
	if err != nil {
		t.Fatal(err)
	}
	var seqs [][]string
	for _, s := range sentences {
		seqs = append(seqs, bpe.Encode(s))
	}
	vocab, err := data.BuildVocab(seqs, data.VocabOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := model.Preset("tiny", vocab.Len())
	cfg.Kind, cfg.DModel, cfg.DFF, cfg.Positions, cfg.MaxLen = kind, 32, 64, positions, maxLen
	m, err := model.FromConfig(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	params, err := model.NewParams(m, tensor.Float32, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{
		bpe.WriteFile(filepath.Join(dir, "bpe.txt")), vocab.WriteFile(filepath.Join(dir, "vocab.txt")),
		m.Config().Save(filepath.Join(dir, "config.json")), checkpoint.Save(filepath.Join(dir, "best.safetensors"), m.Config(), params, map[string]string{
			data.BPEFingerprintKey: bpe.Fingerprint(), data.VocabFingerprintKey: vocab.Fingerprint()}),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// translateOK runs the command and returns its output lines.
func translateOK(t *testing.T, stdin string, args ...string) []string {
	t.Helper()
	var out, errb bytes.Buffer
	if err := run(args, strings.NewReader(stdin), &out, &errb); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, errb.String())
	}
	return strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
}

func TestTranslate(t *testing.T) {
	dir := writeRun(t, "sinusoidal")
	input := "ein Hund spielt .\n\nzwei Katzen schlafen im Park .\n"
	in := writeFile(t, t.TempDir(), "in.de", input)
	tests := []struct {
		name  string
		args  []string
		lines int
	}{
		{"beam search", []string{"-input", in}, 3},
		{"greedy", []string{"-input", in, "-method", "greedy", "-batch", "2"}, 3},
		{"greedy, bf16 products", []string{"-input", in, "-method", "greedy", "-precision", "bf16"}, 3},
		{"sampling", []string{"-input", in, "-method", "sample", "-top-k", "5", "-top-p", "0.9", "-temperature", "0.8"}, 3},
		{"3-best", []string{"-input", in, "-nbest", "3", "-beam", "5"}, 9},
		{"bounded length", []string{"-input", in, "-max-len", "3", "-alpha", "0"}, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"-model", dir}, tc.args...)
			got := translateOK(t, "", args...)
			if len(got) != tc.lines {
				t.Fatalf("%d lines, want %d:\n%s", len(got), tc.lines, strings.Join(got, "\n"))
			}
			// The same again, from standard input: the same output.
			fromStdin := translateOK(t, input, append([]string{"-model", dir}, tc.args[2:]...)...)
			if strings.Join(fromStdin, "\n") != strings.Join(got, "\n") {
				t.Fatalf("from a file:\n%s\nfrom standard input:\n%s", strings.Join(got, "\n"), strings.Join(fromStdin, "\n"))
			}
		})
	}
}

func TestNBestFormat(t *testing.T) {
	dir := writeRun(t, "sinusoidal")
	got := translateOK(t, "ein Hund .\neine Katze .\n", "-model", dir, "-nbest", "2", "-beam", "3")
	for i, line := range got {
		f := strings.SplitN(line, "\t", 3)
		if len(f) != 3 || f[0] != strconv.Itoa(i/2+1) {
			t.Fatalf("line %q: want LINE\\tSCORE\\tTEXT for input line %d", line, i/2+1)
		}
		score, err := strconv.ParseFloat(f[1], 64)
		if err != nil || score > 0 {
			t.Fatalf("line %q: score %v, %v", line, score, err)
		}
		if i%2 == 1 {
			prev, _ := strconv.ParseFloat(strings.Split(got[i-1], "\t")[1], 64)
			if score > prev {
				t.Fatalf("hypotheses out of order: %q after %q", line, got[i-1])
			}
		}
	}
}

func TestScoreMode(t *testing.T) {
	dir := writeRun(t, "learned")
	tmp := t.TempDir()
	in := writeFile(t, tmp, "in.de", "ein Hund .\neine Katze schläft .\n")
	tgt := writeFile(t, tmp, "tgt.en", "a dog .\na cat sleeps .\n")
	png := filepath.Join(tmp, "attention.png")
	got := translateOK(t, "", "-model", dir, "-input", in, "-score", tgt, "-attention", png, "-attention-line", "2", "-head", "1")
	if len(got) != 2 {
		t.Fatalf("%d scores, want 2: %q", len(got), got)
	}
	for _, s := range got {
		if v, err := strconv.ParseFloat(s, 64); err != nil || !(v < 0) || math.IsInf(v, 0) {
			t.Fatalf("score %q", s)
		}
	}
	checkPNG(t, png)
}

func TestAttentionHeatMap(t *testing.T) {
	dir := writeRun(t, "sinusoidal")
	png := filepath.Join(t.TempDir(), "attention.png")
	translateOK(t, "ein Hund läuft .\n", "-model", dir, "-attention", png)
	checkPNG(t, png)
}

func checkPNG(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() < 100 || b.Dy() < 100 {
		t.Fatalf("image of %v", b)
	}
}

func TestErrors(t *testing.T) {
	dir := writeRun(t, "learned")
	tmp := t.TempDir()
	in := writeFile(t, tmp, "in.de", "ein Hund .\neine Katze .\n")
	bad := writeFile(t, tmp, "bad.de", "ein Hund .\nkaputt \xff\n")
	long := writeFile(t, tmp, "long.de", "ein Hund .\n"+strings.Repeat("Hund ", 30)+"\n")
	short := writeFile(t, tmp, "short.en", "a dog .\n")
	huge := writeFile(t, tmp, "huge.de", strings.Repeat("Hund ", 5000)+"\n")
	swapped, emptied := writeRun(t, "learned"), writeRun(t, "learned")
	swapLines(t, filepath.Join(swapped, "vocab.txt"), 5, 6)
	writeFile(t, emptied, "bpe.txt", "")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-input", in}, "-model"},
		{[]string{"-model", dir, "-checkpoint", "final"}, "final.safetensors"},
		{[]string{"-model", tmp, "-checkpoint", filepath.Join(dir, "best.safetensors")}, "bpe.txt"},
		{[]string{"-model", dir, "-input", bad}, "bad.de:2"},
		{[]string{"-model", dir, "-input", long}, "long.de:2: 91 tokens, more than -max-src-len 24; give -long truncate to cut such lines"},
		{[]string{"-model", dir, "-input", in, "-score", short}, "short.en"},
		{[]string{"-model", dir, "-input", in, "-method", "greedy", "-nbest", "2"}, "-nbest"},
		{[]string{"-model", dir, "-input", in, "-nbest", "5"}, "n-best"},
		{[]string{"-model", dir, "-input", in, "-method", "viterbi"}, "viterbi"},
		{[]string{"-model", dir, "-input", in, "-precision", "fp16"}, `precision "fp16": want float32 or bf16`},
		{[]string{"-model", dir, "-input", in, "-attention", "a.png", "-attention-line", "3"}, "in.de has 2 lines"},
		{[]string{"-model", dir, "-input", in, "-attention", filepath.Join(tmp, "a.png"), "-layer", "2"}, "-layer 2"},
		{[]string{"-model", dir, "-input", in, "-attention", filepath.Join(tmp, "a.png"), "-head", "4"}, "-head 4"},
		{[]string{"-model", dir, "stray"}, "unexpected"},
		{[]string{"-model", dir, "-input", huge}, "huge.de:1: "},
		{[]string{"-model", dir, "-input", in, "-max-len", "1000000000"}, "-max-len 1000000000: the model takes at most 24 tokens (its max_len)"},
		{[]string{"-model", dir, "-input", in, "-max-len", "-1"}, "-max-len -1: want 0 (the source's length + 50) or more"},
		{[]string{"-model", dir, "-input", in, "-batch", "0"}, "-batch 0: want 1 to 65536"},
		{[]string{"-model", dir, "-input", in, "-max-src-len", "100"}, "-max-src-len 100: the model takes at most 24"},
		{[]string{"-model", dir, "-input", in, "-alpha", "NaN"}, "length penalty"},
		{[]string{"-model", dir, "-input", in, "-beam", "1000000000000"}, "1000000000000 rows a source"},
		{[]string{"-model", dir, "-input", in, "-long", "drop"}, `-long "drop": want error or truncate`},
		{[]string{"-model", dir, "-input", in, "-max-src-len", "-1"}, "-max-src-len -1: want 0 (the default) or more"},
		{[]string{"-model", swapped, "-input", in}, "vocab.txt is not the file the model was trained with"},
		{[]string{"-model", dir, "-input", in, "-temperature", "0.5"}, "-temperature has no effect without -method sample (have -method beam)"},
		{[]string{"-model", dir, "-input", in, "-method", "greedy", "-beam", "8"}, "-beam has no effect without -method beam"},
		{[]string{"-model", dir, "-input", in, "-head", "1"}, "-head has no effect without -attention"},
		{[]string{"-model", dir, "-input", in, "-score", in, "-method", "greedy"}, "-method has no effect with -score"},
		{[]string{"-model", emptied, "-input", in}, "bpe.txt is not the file the model was trained with"},
	}
	for _, tc := range tests {
		var out, errb bytes.Buffer
		err := run(tc.args, strings.NewReader(""), &out, &errb)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one mentioning %q", tc.args, err, tc.want)
		}
	}
}

// swapLines swaps lines i and j (from 0) of the file at path.
func swapLines(t *testing.T, path string, i, j int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	lines[i], lines[j] = lines[j], lines[i]
	writeFile(t, filepath.Dir(path), filepath.Base(path), strings.Join(lines, "\n"))
}

func TestLongAndCompressedInput(t *testing.T) {
	dir := writeRun(t, "sinusoidal")
	tmp := t.TempDir()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("ein Hund .\n" + strings.Repeat("Hund ", 5000) + "\n"))
	zw.Close()
	in := writeFile(t, tmp, "in.de.gz", gz.String())
	var out, errb bytes.Buffer
	if err := run([]string{"-model", dir, "-input", in, "-long", "truncate", "-method", "greedy"}, nil, &out, &errb); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "\n"); n != 2 {
		t.Errorf("%d output lines, want 2", n)
	}
	if !strings.Contains(errb.String(), "in.de.gz:2: 15001 tokens, truncated to 24 (-max-src-len)") {
		t.Errorf("warning %q", errb.String())
	}
}

// TestSourceBounds checks the default bound on sources, which for
// sinusoidal positions is 1,024 tokens however high the model's max_len
// (more with -max-src-len), and that a target longer than the model's
// max_len is an error naming its line even with -long truncate.
func TestSourceBounds(t *testing.T) {
	long := writeRunMaxLen(t, model.KindEncoderDecoder, "sinusoidal", 1<<20, 40)
	tmp := t.TempDir()
	in := writeFile(t, tmp, "in.de", "ein Hund .\n"+strings.Repeat("Hund ", 400)+"\n")
	var out, errb bytes.Buffer
	err := run([]string{"-model", long, "-input", in, "-method", "greedy", "-max-len", "2"}, nil, &out, &errb)
	want := "in.de:2: 1201 tokens, more than -max-src-len 1024; give -long truncate to cut such lines, or raise -max-src-len (the model takes up to 1048576)"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a source past the default bound: error %v, want one saying %q", err, want)
	}
	got := translateOK(t, "", "-model", long, "-input", in, "-method", "greedy", "-max-len", "2", "-max-src-len", "1201")
	if len(got) != 2 {
		t.Errorf("-max-src-len 1201: %d lines, want 2", len(got))
	}
	out.Reset()
	if err := run([]string{"-model", long, "-input", in, "-method", "greedy", "-max-len", "2", "-long", "truncate"}, nil, &out, &errb); err != nil {
		t.Fatal(err)
	}
	if want := "translate: " + in + ":2: 1201 tokens, truncated to 1024 (-max-src-len)\n"; errb.String() != want {
		t.Errorf("warning %q, want %q", errb.String(), want)
	}
	dir := writeRun(t, "learned")
	tgt := writeFile(t, tmp, "tgt.en", "a dog .\n"+strings.Repeat("dog ", 30)+"\n")
	err = run([]string{"-model", dir, "-input", in, "-score", tgt, "-long", "truncate"}, nil, &out, &errb)
	want = "tgt.en:2: a target of "
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "more than the model's max_len 24 (targets are never truncated)") {
		t.Errorf("a target past max_len: error %v, want one saying %q and the model's max_len", err, want)
	}
}

// TestPrompts continues prompts with a decoder-only model: each output line
// is its prompt, a tab where the continuation starts, and a continuation,
// from the bound on its length; and the flags that need another kind are
// refused.
func TestPrompts(t *testing.T) {
	lm := writeRunOf(t, model.KindDecoderOnly, "learned")
	prompts := []string{"ein Hund", "", "zwei Kinder spielen im"}
	for _, method := range []string{"greedy", "beam", "sample"} {
		got := translateOK(t, strings.Join(prompts, "\n")+"\n", "-model", lm, "-prompt", "-method", method, "-max-len", "4")
		if len(got) != 3 {
			t.Fatalf("%s: %q, want 3 lines continuing the prompts", method, got)
		}
		for i, line := range got {
			if prompt, _, ok := strings.Cut(line, "\t"); !ok || prompt != prompts[i] {
				t.Errorf("%s: line %q, want the prompt %q, a tab and its continuation", method, line, prompts[i])
			}
		}
	}
	if got := translateOK(t, "ein Hund .\n", "-model", lm, "-method", "greedy"); len(got) != 1 {
		t.Fatalf("a decoder-only model translating: %q", got)
	}
	tagger := writeRunOf(t, model.KindEncoderOnly, "learned")
	if got := translateOK(t, "ein Hund .\n\nzwei Katzen\n", "-model", tagger); len(got) != 3 {
		t.Fatalf("an encoder-only model tagging: %q, want a line of tags a line", got)
	}
	targets := filepath.Join(t.TempDir(), "targets.txt")
	if err := os.WriteFile(targets, []byte("a dog\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-model", writeRun(t, "sinusoidal"), "-prompt"}, "-prompt needs a model that continues prompts"},
		{[]string{"-model", lm, "-attention", filepath.Join(t.TempDir(), "a.png")}, "-attention draws cross-attention, which the decoder-only model has not"},
		{[]string{"-model", lm, "-prompt", "-score", "x"}, "give one"},
		{[]string{"-model", tagger, "-score", targets}, "tags each source position: -score and -nbest are for a model that generates"},
		{[]string{"-model", tagger, "-attention", filepath.Join(t.TempDir(), "a.png")}, "-attention draws cross-attention, which the encoder-only model has not"},
	}
	for _, tc := range tests {
		var out, errb bytes.Buffer
		if err := run(tc.args, strings.NewReader("ein Hund\n"), &out, &errb); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one saying %q", tc.args, err, tc.want)
		}
	}
}
