package trainer

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/transformer-go/transformer/data"
	"github.com/transformer-go/transformer/model/checkpoint"
	"github.com/transformer-go/transformer/model/decode"
)

// words writes ids as text, never empty: "x w5 w7".
func words(ids []int) string {
	out := []string{"x"}
	for _, id := range ids {
		out = append(out, fmt.Sprintf("w%d", id))
	}
	return strings.Join(out, " ")
}

// bleuSample is the fixture's held-out sources with references: their greedy
// translations by the fixture's untrained model (BLEU 100), or those
// reversed in order (misaligned).
func bleuSample(t *testing.T, f fixture, misaligned bool) *BLEUSample {
	t.Helper()
	d, err := decode.New(nil, f.m, f.params)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	b := &BLEUSample{Detokenize: words}
	srcs := make([][]int, len(f.data.HeldOut))
	for i, e := range f.data.HeldOut {
		b.Src = append(b.Src, e.Src)
		srcs[i] = append(slices.Clone(e.Src), data.EOSID)
	}
	outs, err := d.Decode(srcs, decode.Search{Method: decode.MethodGreedy, Batch: 7})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range outs {
		b.Refs = append(b.Refs, words(o[0].Tokens))
	}
	if misaligned {
		slices.Reverse(b.Refs)
	}
	return b
}

func TestBLEUOfSample(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		misaligned bool
		want       func(float64) bool
	}{
		{false, func(b float64) bool { return b > 99.999 }},
		{true, func(b float64) bool { return b < 90 }},
	}
	for _, tc := range tests {
		f.data.BLEU = bleuSample(t, f, tc.misaligned)
		tr, err := New(f.m, f.params, f.data, options(t.TempDir(), 8), nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := tr.BLEU()
		if err != nil || !tc.want(got) {
			t.Fatalf("misaligned %t: BLEU %g, %v", tc.misaligned, got, err)
		}
	}
}

func TestBLEUDuringTraining(t *testing.T) {
	f := newFixture(t)
	f.data.BLEU = bleuSample(t, f, false)
	f.data.BLEU.Every, f.data.BLEU.KeepBest = 2, true
	dir := t.TempDir()
	opt := options(dir, 10) // evaluations at steps 4, 8 and 10
	tr, err := New(f.m, f.params, f.data, opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	ms, err := ReadMetrics(filepath.Join(dir, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var withBLEU []int
	for _, m := range ms {
		if m.BLEU != nil {
			withBLEU = append(withBLEU, m.Step)
		}
	}
	if !slices.Equal(withBLEU, []int{8, 10}) {
		t.Fatalf("BLEU at steps %v, want 8 and 10 (every second evaluation and the last)", withBLEU)
	}
	ck, err := checkpoint.Read(filepath.Join(dir, "best.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	if step := ck.Meta["step"]; step != "8" && step != "10" {
		t.Fatalf("best checkpoint by BLEU from step %s, which has no BLEU", step)
	}
}

func TestBLEUSampleValidation(t *testing.T) {
	tests := []struct {
		b    BLEUSample
		want string
	}{
		{BLEUSample{Src: [][]int{{5}}, Detokenize: words}, "1 sources and 0 references"},
		{BLEUSample{Src: [][]int{{5}}, Refs: []string{"a"}}, "detokenizer"},
		{BLEUSample{Src: [][]int{{5}}, Refs: []string{"a"}, Detokenize: words, Every: -1}, "every"},
	}
	for _, tc := range tests {
		if err := tc.b.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an error mentioning %q", tc.b, err, tc.want)
		}
	}
}
