// Package modeltest gives the tests of package model and of package
// model/decode the same small models: the variants decoding must get
// right, with random weights, and random sources; and the tests of model
// and its subpackages one measure of what a call allocates.
package modeltest

import (
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/layers"
	"github.com/transformer-go/transformer/model"
)

// Configs are the variants the cached decoder must get right, of both
// kinds that generate.
func Configs() map[string]model.Config {
	post, _ := model.Preset("tiny", 40)
	post.DModel, post.DFF = 32, 64
	pre := post
	pre.PreNorm, pre.Norm, pre.Positions, pre.MaxLen = true, "rms", "learned", 12
	lm, lmPre := post, pre
	lm.Kind, lmPre.Kind = model.KindDecoderOnly, model.KindDecoderOnly
	lmPre.MaxLen = 20
	// The registry's variants: grouped-query and multi-query attention,
	// rotary positions, ALiBi and SwiGLU, with caches of fewer heads.
	gqa, mqa, rope := post, pre, lmPre
	gqa.Attention, gqa.KVHeads, gqa.FFN = layers.AttentionGroupedQuery, 2, layers.FFNSwiGLU
	mqa.Attention, mqa.KVHeads = layers.AttentionGroupedQuery, 1
	rope.Attention, rope.KVHeads, rope.Positions, rope.FFN = layers.AttentionRotary, 2, layers.PositionsNone, layers.FFNSwiGLU
	ropeED := rope
	ropeED.Kind = model.KindEncoderDecoder
	alibi, alibiED := lm, post
	alibi.Attention, alibi.Positions = layers.AttentionALiBi, layers.PositionsNone
	alibiED.Attention, alibiED.Positions, alibiED.KVHeads = layers.AttentionALiBi, layers.PositionsNone, 2
	window := lm
	window.Attention, window.Options = layers.AttentionSlidingWindow, map[string]float64{layers.OptionWindow: 2}
	return map[string]model.Config{
		"decoder-only, alibi": alibi, "alibi, grouped-query": alibiED, "decoder-only, sliding window": window,
		"post-norm, sinusoidal": post, "pre-norm, rms, learned positions": pre,
		"decoder-only, post-norm": lm, "decoder-only, pre-norm, rms, learned positions": lmPre,
		"grouped-query, swiglu": gqa, "multi-query": mqa,
		"decoder-only, rotary, grouped-query, swiglu": rope, "rotary, grouped-query, swiglu": ropeED,
	}
}

// Model is a float64 model of cfg (of its kind) with random weights; eos
// scales the embedding of EOSID, which makes outputs end sooner.
func Model(t testing.TB, cfg model.Config, seed uint64, eos float64) (model.Model, *graph.Params) {
	t.Helper()
	m, err := model.FromConfig(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	params, err := model.NewParams(m, tensor.Float64, rand.New(rand.NewPCG(seed, 1)))
	if err != nil {
		t.Fatal(err)
	}
	e := params.Value("embed.weight").Data().([]float64)
	for j := range cfg.DModel {
		e[model.EOSID*cfg.DModel+j] *= eos
	}
	return m, params
}

// Sharpen multiplies every weight but the norms' by f: a random model with
// larger weights has less repetitive outputs, so a wrong cache shows.
func Sharpen(params *graph.Params, f float64) {
	for _, name := range params.Names() {
		if strings.Contains(name, "norm") {
			continue
		}
		v := params.Value(name).Data().([]float64)
		for i := range v {
			v[i] *= f
		}
	}
}

// Sources are n sources of several lengths, ending with EOSID.
func Sources(vocab, n int, seed uint64) [][]int {
	rng := rand.New(rand.NewPCG(seed, 2))
	srcs := make([][]int, n)
	for i := range srcs {
		for range 1 + rng.IntN(9) {
			srcs[i] = append(srcs[i], 3+rng.IntN(vocab-3))
		}
		srcs[i] = append(srcs[i], model.EOSID)
	}
	return srcs
}

// Allocated returns the bytes f allocates on the heap, by the runtime's
// count of all allocations (TotalAlloc): what the memory tests measure
// before a refusal, or against an estimate.
func Allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
