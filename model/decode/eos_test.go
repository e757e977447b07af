package decode

import (
	"reflect"
	"slices"
	"testing"

	"github.com/transformer-go/transformer/internal/modeltest"
	"github.com/transformer-go/transformer/model"
)

// TestDecodeAddsEOS decodes sources with and without their end token: an
// encoder-decoder decodes both forms alike (Decode adds EOSID where it is
// missing, without changing the caller's sources), while a decoder-only
// model's prompts are taken as they are.
func TestDecodeAddsEOS(t *testing.T) {
	cfgs := modeltest.Configs()
	m, params := modeltest.Model(t, cfgs["post-norm, sinusoidal"], 3, 1)
	modeltest.Sharpen(params, 3)
	d, err := New(nil, m, params)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ended := modeltest.Sources(40, 6, 7)
	bare := make([][]int, len(ended))
	for i, src := range ended {
		bare[i] = slices.Clone(src[:len(src)-1])
	}
	given := slices.Clone(bare[0])
	for _, s := range []Search{{Method: MethodGreedy, Batch: 4}, {Method: MethodBeam, Beam: 3, NBest: 1, Batch: 4}} {
		want, err := d.Decode(ended, s)
		if err != nil {
			t.Fatal(err)
		}
		got, err := d.Decode(bare, s)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: sources without EOS decode to %v, with it to %v", s.Method, got, want)
		}
	}
	if !slices.Equal(bare[0], given) || cap(bare[0]) != len(given) && bare[0][:cap(bare[0])][len(given)] == model.EOSID {
		t.Errorf("Decode changed the caller's source: %v", bare[0])
	}

	lm, lmParams := modeltest.Model(t, cfgs["decoder-only, post-norm"], 3, 1)
	modeltest.Sharpen(lmParams, 3)
	dl, err := New(nil, lm, lmParams)
	if err != nil {
		t.Fatal(err)
	}
	defer dl.Close()
	greedy := Search{Method: MethodGreedy, MaxLen: 6, Batch: 4}
	prompts, err := dl.Decode([][]int{{5, 6}}, greedy)
	if err != nil {
		t.Fatal(err)
	}
	withEOS, err := dl.Decode([][]int{{5, 6, model.EOSID}}, greedy)
	if err != nil {
		t.Fatal(err)
	}
	want, err := uncachedGreedy(lm, lmParams, [][]int{{5, 6}}, 6)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(prompts[0][0].Tokens, want[0].Tokens) || reflect.DeepEqual(prompts, withEOS) {
		t.Errorf("a prompt continues as %v (re-running the model: %v), with EOS as %v: a prompt must be taken as it is",
			prompts[0][0].Tokens, want[0].Tokens, withEOS[0][0].Tokens)
	}
}
