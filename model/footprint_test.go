package model_test

import (
	"strings"
	"testing"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/internal/modeltest"
	"github.com/transformer-go/transformer/internal/sysmem"
	"github.com/transformer-go/transformer/model"
)

// TestFootprintCountsEveryParameter compares the estimate's parameter count
// with the parameters the encoder-decoder really registers.
func TestFootprintCountsEveryParameter(t *testing.T) {
	for _, name := range model.PresetNames() {
		for _, v := range []struct {
			name   string
			change func(c *model.Config)
		}{
			{"paper", func(c *model.Config) {}},
			{"pre-norm rms learned", func(c *model.Config) { c.PreNorm, c.Norm, c.Positions, c.MaxLen = true, "rms", "learned", 300 }},
			{"decoder heavy", func(c *model.Config) { c.EncoderLayers, c.DecoderLayers = 1, 4 }},
			{"grouped-query swiglu", func(c *model.Config) { c.Attention, c.KVHeads, c.FFN = "grouped-query", 2, "swiglu" }},
		} {
			cfg, err := model.Preset(name, 1000)
			if err != nil {
				t.Fatal(err)
			}
			v.change(&cfg)
			m, err := model.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			shapes, err := model.ParamShapes(m)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := cfg.Footprint(4, 1).Params, int64(shapes.Count()); got != want {
				t.Errorf("%s %s: footprint counts %d parameters, the model has %d", name, v.name, got, want)
			}
		}
	}
}

// limited is a CPU runtime that may allocate l.
func limited(l sysmem.Limit) *graph.Runtime {
	rt := graph.CPU()
	rt.LimitMemory(l)
	return rt
}

func TestCheckMemoryNamesTheField(t *testing.T) {
	cfg, _ := model.Preset("base", 37000)
	if err := cfg.CheckMemory(limited(sysmem.Limit{Bytes: 16 << 30, Source: "test"}), cfg.Footprint(4, 4096), true); err != nil {
		t.Fatalf("base on 16 GB: %v", err)
	}
	tests := []struct {
		change func(c *model.Config)
		want   string
	}{
		{func(c *model.Config) { c.Vocab = 2e6 }, "vocab = 2000000"},
		{func(c *model.Config) { c.EncoderLayers = 1000 }, "encoder_layers = 1000"},
		{func(c *model.Config) { c.Positions, c.MaxLen = "learned", 1<<20 }, "max_len = 1048576"},
	}
	for _, tt := range tests {
		c := cfg
		tt.change(&c)
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
		err := c.CheckMemory(limited(sysmem.Limit{Bytes: 2 << 30, Source: "cgroup v2 /sys/fs/cgroup/memory.max"}), c.Footprint(4, 4096), false)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "may allocate 2.0 GB (lowest limit: cgroup v2 /sys/fs/cgroup/memory.max)") {
			t.Errorf("error %v, want one naming %q, the 2.0 GB available and the limit", err, tt.want)
		}
	}
}

// TestBatchesThatCannotFitAreRefused scores a source of 300,000 tokens: it
// is refused, naming the sizes and the estimate, before anything is
// allocated. (Package decode refuses a beam too wide the same way.)
func TestBatchesThatCannotFitAreRefused(t *testing.T) {
	for _, name := range []string{"post-norm, sinusoidal", "decoder-only, post-norm"} {
		cfg := modeltest.Configs()[name]
		cfg.MaxLen = 1 << 20
		m, params := modeltest.Model(t, cfg, 1, 1)
		long := make([]int, 300_000)
		for i := range long {
			long[i] = 5
		}
		var err error
		grew := modeltest.Allocated(func() {
			_, err = model.ScorePairs(nil, m, params, [][]int{long}, [][]int{{model.BOSID, 6, model.EOSID}}, 1)
		})
		if err == nil || !strings.Contains(err.Error(), "scoring pairs 1 to 1 (sources of up to 300000 tokens") || !strings.Contains(err.Error(), "GB needed") {
			t.Errorf("%s: a source of 300,000 tokens: %v", name, err)
		}
		if grew > 64<<20 {
			t.Errorf("%s: allocated %d MB before refusing", name, grew>>20)
		}
	}
}

// TestMemoryEstimatesAreLowerBounds scores batches that fit and checks the
// estimate the memory check uses against the activations held at once
// (the arena) for the forward pass: the check refuses only what cannot
// fit. (Package decode checks its estimate likewise.)
func TestMemoryEstimatesAreLowerBounds(t *testing.T) {
	for _, name := range []string{"post-norm, sinusoidal", "decoder-only, post-norm", "grouped-query, swiglu"} {
		cfg := modeltest.Configs()[name]
		m, params := modeltest.Model(t, cfg, 1, 1)
		src := make([][]int, 4)
		tgt := make([][]int, 4)
		for i := range src {
			for range 200 {
				src[i] = append(src[i], 5+i)
				tgt[i] = append(tgt[i], 6+i)
			}
			tgt[i][0] = model.BOSID
		}
		rt := graph.CPU()
		if _, err := model.ScorePairs(rt, m, params, src, tgt, 4); err != nil {
			t.Fatal(err)
		}
		tgtLen := 199
		if cfg.Kind == model.KindDecoderOnly {
			tgtLen += 200
		}
		est, took := cfg.ForwardBytes(int(params.Dtype().Size()), 4, 200, tgtLen), float64(rt.ArenaBytes())
		t.Logf("%s: scoring 4 pairs of 200 tokens: estimated %.1f MB, took %.1f MB", name, est/(1<<20), took/(1<<20))
		if est > took {
			t.Errorf("%s: scoring 4 pairs of 200 tokens: estimated %.0f bytes, took %.0f", name, est, took)
		}
	}
}
