package bleu_test

import (
	"bytes"
	"compress/gzip"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/transformer-go/transformer/trainer/bleu"
)

func readFixture(t *testing.T, name string) []string {
	t.Helper()
	lines, err := bleu.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

func TestCorpus(t *testing.T) {
	tests := []struct {
		name  string
		hyps  string
		opt   bleu.Options
		score float64
		line  string
		sig   string
	}{
		// Computed with sacreBLEU 2.6.0.
		{"default", "hyps.txt", bleu.Options{}, 28.2126,
			"BLEU = 28.21 68.0/41.3/21.4/10.5 (BP = 1.000 ratio = 1.087 hyp_len = 50 ref_len = 46)",
			"nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0"},
		{"lowercase", "hyps.txt", bleu.Options{Lowercase: true}, 32.6235,
			"BLEU = 32.62 72.0/45.7/26.2/13.2 (BP = 1.000 ratio = 1.087 hyp_len = 50 ref_len = 46)",
			"nrefs:1|case:lc|eff:no|tok:13a|smooth:exp|version:2.6.0"},
		{"tok none", "hyps.txt", bleu.Options{Tokenize: bleu.TokenizeNone}, 28.8471,
			"BLEU = 28.85 58.1/35.9/25.7/12.9 (BP = 1.000 ratio = 1.132 hyp_len = 43 ref_len = 38)",
			"nrefs:1|case:mixed|eff:no|tok:none|smooth:exp|version:2.6.0"},
		{"short", "hyps_short.txt", bleu.Options{}, 0,
			"BLEU = 0.00 22.2/8.3/8.3/0.0 (BP = 0.016 ratio = 0.196 hyp_len = 9 ref_len = 46)",
			"nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0"},
		// Worked out by hand from sacreBLEU's compute_bleu and the counts
		// above: 34/50 19/46 9/42 4/38 and 2/9 0/6 0/3 0/0.
		{"add-k", "hyps.txt", bleu.Options{Smooth: bleu.SmoothAddK}, 30.4768,
			"BLEU = 30.48 68.0/42.6/23.3/12.8 (BP = 1.000 ratio = 1.087 hyp_len = 50 ref_len = 46)",
			"nrefs:1|case:mixed|eff:no|tok:13a|smooth:add-k[1.00]|version:2.6.0"},
		{"short add-k", "hyps_short.txt", bleu.Options{Smooth: bleu.SmoothAddK}, 0.4892,
			"BLEU = 0.49 22.2/14.3/25.0/100.0 (BP = 0.016 ratio = 0.196 hyp_len = 9 ref_len = 46)",
			"nrefs:1|case:mixed|eff:no|tok:13a|smooth:add-k[1.00]|version:2.6.0"},
		{"short none", "hyps_short.txt", bleu.Options{Smooth: bleu.SmoothNone}, 0,
			"BLEU = 0.00 22.2/0.0/0.0/0.0 (BP = 0.016 ratio = 0.196 hyp_len = 9 ref_len = 46)",
			"nrefs:1|case:mixed|eff:no|tok:13a|smooth:none|version:2.6.0"},
		{"short floor", "hyps_short.txt", bleu.Options{Smooth: bleu.SmoothFloor}, 0,
			"BLEU = 0.00 22.2/1.7/3.3/0.0 (BP = 0.016 ratio = 0.196 hyp_len = 9 ref_len = 46)",
			"nrefs:1|case:mixed|eff:no|tok:13a|smooth:floor[0.10]|version:2.6.0"},
		{"short floor eff", "hyps_short.txt", bleu.Options{Smooth: bleu.SmoothFloor, EffectiveOrder: true}, 0.0816,
			"BLEU = 0.08 22.2/1.7/3.3/0.0 (BP = 0.016 ratio = 0.196 hyp_len = 9 ref_len = 46)",
			"nrefs:1|case:mixed|eff:yes|tok:13a|smooth:floor[0.10]|version:2.6.0"},
		{"short floor 0.5 eff", "hyps_short.txt",
			bleu.Options{Smooth: bleu.SmoothFloor, SmoothValue: 0.5, EffectiveOrder: true}, 0.2386,
			"BLEU = 0.24 22.2/8.3/16.7/0.0 (BP = 0.016 ratio = 0.196 hyp_len = 9 ref_len = 46)",
			"nrefs:1|case:mixed|eff:yes|tok:13a|smooth:floor[0.50]|version:2.6.0"},
		{"short exp eff", "hyps_short.txt", bleu.Options{EffectiveOrder: true}, 0.1894,
			"BLEU = 0.19 22.2/8.3/8.3/0.0 (BP = 0.016 ratio = 0.196 hyp_len = 9 ref_len = 46)",
			"nrefs:1|case:mixed|eff:yes|tok:13a|smooth:exp|version:2.6.0"},
	}
	refs := readFixture(t, "refs.txt")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := bleu.Corpus(readFixture(t, tt.hyps), refs, tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(got.Score-tt.score) > 1e-4 {
				t.Errorf("score = %.6f, want %.4f", got.Score, tt.score)
			}
			if got.String() != tt.line {
				t.Errorf("String() = %q\nwant        %q", got.String(), tt.line)
			}
			if sig := tt.opt.Signature(); sig != tt.sig {
				t.Errorf("Signature() = %q, want %q", sig, tt.sig)
			}
		})
	}
}

func TestCorpusCounts(t *testing.T) {
	got, err := bleu.Corpus(readFixture(t, "hyps.txt"), readFixture(t, "refs.txt"), bleu.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := [bleu.MaxOrder]int{34, 19, 9, 4}; got.Counts != want {
		t.Errorf("Counts = %v, want %v", got.Counts, want)
	}
	if want := [bleu.MaxOrder]int{50, 46, 42, 38}; got.Totals != want {
		t.Errorf("Totals = %v, want %v", got.Totals, want)
	}
}

func TestSentence(t *testing.T) {
	tests := []struct {
		name     string
		hyp, ref string
		opt      bleu.Options
		line     string
	}{
		{"identical", "The cat sat on the mat.", "The cat sat on the mat.", bleu.Options{},
			"BLEU = 100.00 100.0/100.0/100.0/100.0 (BP = 1.000 ratio = 1.000 hyp_len = 7 ref_len = 7)"},
		{"short", "The cat sat.", "The cat sat on the mat.", bleu.Options{EffectiveOrder: true},
			"BLEU = 30.18 100.0/66.7/50.0/50.0 (BP = 0.472 ratio = 0.571 hyp_len = 4 ref_len = 7)"},
		{"empty hypothesis", "", "The cat sat on the mat.", bleu.Options{},
			"BLEU = 0.00 0.0/0.0/0.0/0.0 (BP = 0.000 ratio = 0.000 hyp_len = 0 ref_len = 7)"},
		{"blank reference", "A cat.", " ", bleu.Options{},
			"BLEU = 0.00 0.0/0.0/0.0/0.0 (BP = 1.000 ratio = 0.000 hyp_len = 3 ref_len = 0)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := bleu.Sentence(tt.hyp, tt.ref, tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			if got.String() != tt.line {
				t.Errorf("String() = %q\nwant        %q", got.String(), tt.line)
			}
		})
	}
}

func TestCorpusErrors(t *testing.T) {
	tests := []struct {
		name       string
		hyps, refs []string
		opt        bleu.Options
		want       string
	}{
		{"length mismatch", []string{"a", "b"}, []string{"a"}, bleu.Options{}, "2 hypotheses but 1 references"},
		{"empty reference", []string{"a", "b"}, []string{"a", ""}, bleu.Options{}, "reference line 2 is empty"},
		{"invalid hypothesis", []string{"a\xff"}, []string{"a"}, bleu.Options{}, "hypothesis line 1: invalid UTF-8"},
		{"invalid reference", []string{"a"}, []string{"\xc3"}, bleu.Options{}, "reference line 1: invalid UTF-8"},
		{"tokenizer", []string{"a"}, []string{"a"}, bleu.Options{Tokenize: "intl"}, `unknown tokenizer "intl"`},
		{"smoothing", []string{"a"}, []string{"a"}, bleu.Options{Smooth: "laplace"}, `unknown smoothing method "laplace"`},
		{"smooth value", []string{"a"}, []string{"a"}, bleu.Options{Smooth: bleu.SmoothFloor, SmoothValue: -1}, "smoothing value -1"},
		{"floor above 1", []string{"a b c"}, []string{"a b d"}, bleu.Options{Smooth: bleu.SmoothFloor, SmoothValue: 1e308}, "smoothing value 1e+308 of floor: want at most 1"},
		{"huge add-k", []string{"a b c"}, []string{"a b d"}, bleu.Options{Smooth: bleu.SmoothAddK, SmoothValue: 1e308}, "smoothing value 1e+308 of add-k: want at most 1e+06"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := bleu.Corpus(tt.hyps, tt.refs, tt.opt)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Corpus error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestReadLines(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
		err      string
	}{
		{"empty", "", nil, ""},
		{"no final newline", "a\nb", []string{"a", "b"}, ""},
		{"trailing whitespace", "a \r\n\n b\t\n", []string{"a", "", " b"}, ""},
		{"invalid UTF-8", "ok\nstill ok\nbad \xe2\x82\n", nil, "in.txt:3: invalid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := bleu.ReadLines(strings.NewReader(tt.in), "in.txt")
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("error = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
				t.Errorf("ReadLines = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestReadFileGzip(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write([]byte("one\ntwo\n")); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "s.txt.gz")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := bleu.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "|") != "one|two" {
		t.Errorf("ReadFile = %q, want [one two]", got)
	}
	if _, err := bleu.ReadFile(filepath.Join(t.TempDir(), "missing.txt")); err == nil {
		t.Error("ReadFile of a missing file: no error")
	}
}
