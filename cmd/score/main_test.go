package main

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/cmd/internal/srcflags"
	"github.com/transformer-go/transformer/data"
	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/graph/safetensors"
	"github.com/transformer-go/transformer/internal/sysmem"
	"github.com/transformer-go/transformer/model"
	"github.com/transformer-go/transformer/model/checkpoint"
)

const python = "/usr/bin/python3"

func TestScoresMatchPyTorch(t *testing.T) {
	if err := exec.Command(python, "-c", "import torch").Run(); err != nil {
		msg := "PyTorch not found for " + python + ": apt-get install python3-torch"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	dir := t.TempDir()
	if out, err := exec.Command(python, "../../model/checkpoint/testdata/torch_parity.py", dir, "3").CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// bf16 products move the scores by about bfloat16's 2^-9 per product
	// (this model's d_model of 32 is large enough for bfloat16 to pay,
	// gemm.BF16Pays); float32 ones must match PyTorch's to 1e-4.
	for _, c := range []struct {
		precision string
		tol       float64
	}{{"float32", 1e-4}, {"bf16", 5e-3}} {
		var stdout, stderr bytes.Buffer
		err := run([]string{"-checkpoint", filepath.Join(dir, "model.safetensors"), "-from", "torch", "-heads", "4",
			"-src", filepath.Join(dir, "src.txt"), "-tgt", filepath.Join(dir, "tgt.txt"), "-batch", "4", "-precision", c.precision}, &stdout, &stderr)
		if err != nil {
			t.Fatal(err, stderr.String())
		}
		want, _ := os.ReadFile(filepath.Join(dir, "expected.txt"))
		got, exp := strings.Fields(stdout.String()), strings.Fields(string(want))
		if len(got) != len(exp) {
			t.Fatalf("%d scores, want %d", len(got), len(exp))
		}
		worst := 0.0
		for i := range got {
			g, _ := strconv.ParseFloat(got[i], 64)
			e, _ := strconv.ParseFloat(exp[i], 64)
			d := math.Abs((g - e) / e)
			if d > c.tol {
				t.Errorf("%s: line %d: %g, PyTorch %g", c.precision, i+1, g, e)
			}
			worst = max(worst, d)
		}
		t.Logf("%s: scores within %.2g of PyTorch's float32 ones", c.precision, worst)
	}
}

func TestErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string { return writeFile(t, dir, name, text) }
	src := write("src.txt", "5 6\n7\n")
	bad := write("bad.txt", "5 6\n7 x 9\n")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-src", src}, "required"},
		{[]string{"-checkpoint", src, "-src", src, "-tgt", src, "-precision", "fp16"}, `precision "fp16"`},
		{[]string{"-checkpoint", src, "-src", src, "-tgt", src, "-from", "onnx"}, "torch"},
		{[]string{"-checkpoint", src, "-src", src, "-tgt", src, "-from", "torch"}, "-heads"},
		{[]string{"-checkpoint", filepath.Join(dir, "none.safetensors"), "-src", src, "-tgt", src}, "none.safetensors"},
		{[]string{"-checkpoint", src, "-src", src, "-tgt", bad}, "src.txt"},
		{[]string{"-checkpoint", src, "-src", src, "-tgt", src, "-heads", "3"}, "-heads 3 has no effect without -from torch"},
		{[]string{"-checkpoint", src, "-src", src, "-tgt", src, "extra"}, `unexpected arguments ["extra"]`},
	}
	for _, tc := range tests {
		var out, errb bytes.Buffer
		err := run(tc.args, &out, &errb)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one mentioning %q", tc.args, err, tc.want)
		}
	}
	lr, err := data.OpenLines(bad)
	if err != nil {
		t.Fatal(err)
	}
	defer lr.Close()
	if _, err := readIDs(lr, 10, 100, srcflags.Bound{Max: 50, MaxLen: 50}, false); err == nil || !strings.Contains(err.Error(), `bad.txt:2: field 2, "x", is not a token id: want integers from 1 to 99`) {
		t.Errorf("bad id: %v", err)
	}
}

// TestHostileInputs scores with a real checkpoint and inputs a careless or
// hostile user gives: each is an error naming the file and line.
func TestHostileInputs(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string { return writeFile(t, dir, name, text) }
	ck, cfg, params := writeCheckpoint(t, dir)
	// Sinusoidal positions: max_len 2^20 needs no more weights, and a
	// source of 400,000 ids would need terabytes of attention.
	longCfg := cfg
	longCfg.MaxLen = 1 << 20
	longCk := filepath.Join(dir, "long.safetensors")
	if err := checkpoint.Save(longCk, longCfg, params, nil); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(dir, "huge.safetensors")
	if err := safetensors.Write(huge, []safetensors.Tensor{{Name: "embed.weight", DType: safetensors.F32, Shape: []int{1e12, 0}}}, nil); err != nil {
		t.Fatal(err)
	}
	src := write("src.txt", "5 6 2\n7 2\n")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-checkpoint", ck, "-src", src, "-tgt", write("nobos.txt", "1 5 2\n5 2\n")}, "nobos.txt:2: a target starts with the start token 1"},
		{[]string{"-checkpoint", ck, "-src", write("long.txt", "5 2\n"+strings.Repeat("5 ", 20000)+"\n"), "-tgt", src}, "long.txt:2: 20000 tokens, more than -max-src-len 16; give -long truncate to cut such lines"},
		{[]string{"-checkpoint", ck, "-src", src, "-tgt", write("longtgt.txt", "1 5 2\n1 "+strings.Repeat("5 ", 20)+"\n"), "-long", "truncate"},
			"longtgt.txt:2: a target of 21 tokens, more than the model's max_len 16 (targets are never truncated)"},
		{[]string{"-checkpoint", ck, "-src", src, "-tgt", src, "-max-src-len", "17"}, "-max-src-len 17: the model takes at most 16 tokens (its max_len)"},
		{[]string{"-checkpoint", ck, "-src", src, "-tgt", src, "-max-src-len", "-1"}, "-max-src-len -1: want 0 (the default) or more"},
		{[]string{"-checkpoint", ck, "-src", src, "-tgt", src, "-long", "drop"}, `-long "drop": want error or truncate`},
		{[]string{"-checkpoint", ck, "-src", src, "-tgt", write("zero.txt", strings.Repeat("0", 2<<20))}, "zero.txt:1: line longer than"},
		{[]string{"-checkpoint", huge, "-from", "torch", "-heads", "1", "-src", src, "-tgt", src}, "vocab is 1000000000000"},
		{[]string{"-checkpoint", longCk, "-src", write("long400k.txt", strings.Repeat("5 ", 400000)+"\n"), "-tgt", write("tgt1.txt", "1 5 2\n")},
			"long400k.txt:1: 400000 tokens, more than -max-src-len 1024; give -long truncate to cut such lines, or raise -max-src-len (the model takes up to 1048576)"},
		{[]string{"-checkpoint", longCk, "-src", filepath.Join(dir, "long400k.txt"), "-tgt", filepath.Join(dir, "tgt1.txt"), "-max-src-len", "1048576"},
			"scoring batches of 32 pairs (-batch), sources of up to 1048576 tokens (-max-src-len) and targets of up to 1048576: at least"},
	}
	for _, tc := range tests {
		var out, errb bytes.Buffer
		err := run(tc.args, &out, &errb)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one mentioning %q", tc.args, err, tc.want)
		}
	}
}

// TestLargestBatchIsCheckedFirst scores two short pairs under a memory
// limit that they fit but a batch of -batch pairs of the longest sources
// and targets does not: score refuses before it prints anything, naming
// the flags to lower; under a limit the largest batch fits, it prints
// every score.
func TestLargestBatchIsCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	ck, cfg, _ := writeCheckpoint(t, dir)
	src := writeFile(t, dir, "src.txt", "5 6 2\n7 2\n")
	tgt := writeFile(t, dir, "tgt.txt", "1 5 2\n1 7 2\n")
	m, params, err := load(ck, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	largest := cfg.ForwardBytes(4, 32, cfg.MaxLen, cfg.MaxLen)
	for _, c := range []struct {
		limit float64
		want  string // "" for every score
	}{{largest / 2, "lower -batch, or -max-src-len"}, {largest, ""}} {
		o := &options{batch: 32, src: srcflags.Flags{Long: "error"}, srcPath: src, tgtPath: tgt}
		srcs, err := data.OpenLines(src)
		if err != nil {
			t.Fatal(err)
		}
		tgts, err := data.OpenLines(tgt)
		if err != nil {
			t.Fatal(err)
		}
		rt := graph.CPU()
		rt.LimitMemory(sysmem.Limit{Bytes: int64(c.limit), Source: "a test"})
		var out, errb bytes.Buffer
		err = o.stream(rt, m, params, srcs, tgts, &out, &errb)
		srcs.Close()
		tgts.Close()
		switch {
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || out.Len() > 0):
			t.Errorf("limit %.0f bytes: error %v, output %q; want an error saying %q and no output", c.limit, err, out.String(), c.want)
		case c.want == "" && (err != nil || len(strings.Fields(out.String())) != 2):
			t.Errorf("limit %.0f bytes: error %v, output %q; want 2 scores", c.limit, err, out.String())
		}
	}
}

// TestTruncate scores with -long truncate: a source past -max-src-len is
// cut, keeping its EOS, with a warning naming its line.
func TestTruncate(t *testing.T) {
	dir := t.TempDir()
	ck, _, _ := writeCheckpoint(t, dir)
	src := writeFile(t, dir, "src.txt", "5 6 2\n"+strings.Repeat("7 ", 30)+"2\n")
	tgt := writeFile(t, dir, "tgt.txt", "1 5 2\n1 7 2\n")
	var out, errb bytes.Buffer
	if err := run([]string{"-checkpoint", ck, "-src", src, "-tgt", tgt, "-long", "truncate", "-max-src-len", "8"}, &out, &errb); err != nil {
		t.Fatal(err, errb.String())
	}
	if n := len(strings.Fields(out.String())); n != 2 {
		t.Errorf("%d scores, want 2", n)
	}
	if want := "score: " + src + ":2: 31 tokens, truncated to 8 (-max-src-len)\n"; errb.String() != want {
		t.Errorf("warning %q, want %q", errb.String(), want)
	}
	b := srcflags.Bound{Max: 3, MaxLen: 16, Truncate: true}
	for _, tc := range []struct{ in, want []int }{{[]int{5, 6, 7, 2}, []int{5, 6, 2}}, {[]int{5, 6, 7, 8}, []int{5, 6, 7}}, {[]int{5, 2}, []int{5, 2}}} {
		if got, err := cutSource(b, "x:1", tc.in); err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("cutSource(%v): %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

// writeCheckpoint writes dir/ck.safetensors, a tiny untrained
// encoder-decoder with sinusoidal positions and max_len 16, and returns its
// path, config and weights.
func writeCheckpoint(t *testing.T, dir string) (string, model.Config, *graph.Params) {
	t.Helper()
	cfg, _ := model.Preset("tiny", 20)
	cfg.DModel, cfg.DFF, cfg.EncoderLayers, cfg.DecoderLayers, cfg.MaxLen = 8, 16, 1, 1, 16
	m, _ := model.New(cfg)
	params, err := model.NewParams(m, tensor.Float32, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	ck := filepath.Join(dir, "ck.safetensors")
	if err := checkpoint.Save(ck, cfg, params, nil); err != nil {
		t.Fatal(err)
	}
	return ck, cfg, params
}

// writeFile writes text to dir/name and returns its path.
func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestNonFiniteScoreIsAnError scores with finite weights so large that the
// logits overflow: the NaN score is an error naming the line, never
// printed as a result.
func TestNonFiniteScoreIsAnError(t *testing.T) {
	dir := t.TempDir()
	_, cfg, params := writeCheckpoint(t, dir)
	for _, name := range params.Names() {
		for i, v := range params.Value(name).Data().([]float32) {
			params.Value(name).Data().([]float32)[i] = v * 1e30
		}
	}
	ck := filepath.Join(dir, "big.safetensors")
	if err := checkpoint.Save(ck, cfg, params, nil); err != nil {
		t.Fatal(err)
	}
	src := writeFile(t, dir, "src.txt", "5 6 2\n")
	tgt := writeFile(t, dir, "tgt.txt", "1 5 6 2\n")
	var out, errb bytes.Buffer
	err := run([]string{"-checkpoint", ck, "-src", src, "-tgt", tgt}, &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "line 1: the score is") || out.Len() != 0 {
		t.Fatalf("error %v, output %q; want an error naming line 1 and no output", err, out.String())
	}
}
