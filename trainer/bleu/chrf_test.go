package bleu_test

import (
	"math"
	"strings"
	"testing"

	"github.com/transformer-go/transformer/trainer/bleu"
)

func TestChrF(t *testing.T) {
	tests := []struct {
		name       string
		hyps, refs []string
		opt        bleu.ChrFOptions
		score      float64
	}{
		// Worked out by hand from sacreBLEU's chrf.py: precision and
		// recall are averaged over the orders that both sides have.
		{"prefix", []string{"ab"}, []string{"abc"}, bleu.ChrFOptions{}, 63.6364},
		{"longer", []string{"abcd"}, []string{"ab"}, bleu.ChrFOptions{}, 78.125},
		// Hypothesis n-grams of an order that the reference lacks are not
		// counted, so the first segment adds no trigrams.
		{"corpus", []string{"abc", "xyz"}, []string{"ab", "xyz"}, bleu.ChrFOptions{}, 96.875},
		{"whitespace removed", []string{"a b"}, []string{"ab"}, bleu.ChrFOptions{}, 100},
		{"whitespace kept", []string{"a b"}, []string{"ab"}, bleu.ChrFOptions{Whitespace: true}, 45.4545},
		{"case", []string{"AB"}, []string{"ab"}, bleu.ChrFOptions{}, 0},
		{"lowercase", []string{"AB"}, []string{"ab"}, bleu.ChrFOptions{Lowercase: true}, 100},
		{"empty hypothesis", []string{""}, []string{"ab"}, bleu.ChrFOptions{}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := bleu.ChrF(tt.hyps, tt.refs, tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(got.Score-tt.score) > 1e-4 {
				t.Errorf("score = %.6f, want %.4f", got.Score, tt.score)
			}
		})
	}
}

func TestChrFGolden(t *testing.T) {
	// Computed with sacreBLEU 2.6.0.
	got, err := bleu.ChrF(readFixture(t, "hyps.txt"), readFixture(t, "refs.txt"), bleu.ChrFOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got.Score-66.1012) > 1e-4 {
		t.Errorf("score = %.6f, want 66.1012", got.Score)
	}
	if want := "chrF2 = 66.10"; got.String() != want {
		t.Errorf("String() = %q, want %q", got.String(), want)
	}
}

func TestChrFSignature(t *testing.T) {
	tests := []struct {
		opt  bleu.ChrFOptions
		want string
	}{
		{bleu.ChrFOptions{}, "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0"},
		{bleu.ChrFOptions{Lowercase: true, Whitespace: true, CharOrder: 4},
			"nrefs:1|case:lc|eff:yes|nc:4|nw:0|space:yes|version:2.6.0"},
	}
	for _, tt := range tests {
		if got := tt.opt.Signature(); got != tt.want {
			t.Errorf("%+v.Signature() = %q, want %q", tt.opt, got, tt.want)
		}
	}
}

func TestChrFErrors(t *testing.T) {
	tests := []struct {
		name       string
		hyps, refs []string
		opt        bleu.ChrFOptions
		want       string
	}{
		{"length mismatch", []string{"a"}, nil, bleu.ChrFOptions{}, "1 hypotheses but 0 references"},
		{"empty reference", []string{"a"}, []string{""}, bleu.ChrFOptions{}, "reference line 1 is empty"},
		{"negative beta", []string{"a"}, []string{"a"}, bleu.ChrFOptions{Beta: -1}, "must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := bleu.ChrF(tt.hyps, tt.refs, tt.opt)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ChrF error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}
