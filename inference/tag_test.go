package inference_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/model"
)

// TestTagIDs checks that tagging gives an encoder-only model's most
// probable token at each position up to the first EOS: scored with those
// tokens as targets (EOS, then padding, after them), each source is
// exactly right, and with one token changed it is not.
func TestTagIDs(t *testing.T) {
	cfg, err := model.Preset("tiny", 10)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Kind, cfg.Dropout, cfg.Positions, cfg.MaxLen = model.KindEncoderOnly, 0, "learned", 16
	cfg.DModel, cfg.Heads, cfg.DFF, cfg.EncoderLayers = 32, 4, 64, 2
	m, err := model.FromConfig(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	params, err := model.NewParams(m, tensor.Float32, rand.New(rand.NewPCG(5, 5)))
	if err != nil {
		t.Fatal(err)
	}
	progs := graph.NewPrograms()
	defer progs.Close()
	for _, src := range [][]int{{5, 6, 7, model.EOSID}, {8, model.EOSID}, {4, 4, 9, 9, 5, model.EOSID}} {
		tags, err := model.Tag(nil, m, params, [][]int{src}, 1)
		if err != nil {
			t.Fatal(err)
		}
		ids := tags[0]
		if end := slices.Index(ids, model.EOSID); end >= 0 {
			ids = ids[:end]
		}
		n := len(src)
		if len(ids) >= n {
			t.Fatalf("%v tagged %v", src, ids)
		}
		score := func(tags []int) bool {
			tgt := make([]int, n)
			copy(tgt, append(tags, model.EOSID))
			sh := model.Shape{Batch: 1, SrcLen: n, TgtLen: n}
			sc, err := model.ScoreBatch(nil, progs, m, params, model.Batch{Shape: sh, Src: src, TgtIn: make([]int, n), TgtOut: tgt})
			if err != nil {
				t.Fatal(err)
			}
			return sc.Exact[0]
		}
		if !score(ids) {
			t.Errorf("%v tagged %v, which are not the most probable tokens", src, ids)
		}
		if len(ids) == 0 {
			continue
		}
		vocab := cfg.Vocab
		wrong := append([]int{(ids[0]-3+1)%(vocab-3) + 3}, ids[1:]...)
		if score(wrong) {
			t.Errorf("%v: %v scores as exact too", src, wrong)
		}
	}
}
