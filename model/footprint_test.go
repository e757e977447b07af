package model

import (
	"runtime"
	"strings"
	"testing"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/internal/sysmem"
)

// TestFootprintCountsEveryParameter compares the estimate's parameter count
// with the parameters the encoder-decoder really registers.
func TestFootprintCountsEveryParameter(t *testing.T) {
	for _, name := range PresetNames() {
		for _, v := range []struct {
			name   string
			change func(c *Config)
		}{
			{"paper", func(c *Config) {}},
			{"pre-norm rms learned", func(c *Config) { c.PreNorm, c.Norm, c.Positions, c.MaxLen = true, "rms", "learned", 300 }},
			{"decoder heavy", func(c *Config) { c.EncoderLayers, c.DecoderLayers = 1, 4 }},
			{"grouped-query swiglu", func(c *Config) { c.Attention, c.KVHeads, c.FFN = "grouped-query", 2, "swiglu" }},
		} {
			cfg, err := Preset(name, 1000)
			if err != nil {
				t.Fatal(err)
			}
			v.change(&cfg)
			m, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			shapes, err := ParamShapes(m)
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
	cfg, _ := Preset("base", 37000)
	if err := cfg.CheckMemory(limited(sysmem.Limit{Bytes: 16 << 30, Source: "test"}), cfg.Footprint(4, 4096), true); err != nil {
		t.Fatalf("base on 16 GB: %v", err)
	}
	tests := []struct {
		change func(c *Config)
		want   string
	}{
		{func(c *Config) { c.Vocab = 2e6 }, "vocab = 2000000"},
		{func(c *Config) { c.EncoderLayers = 1000 }, "encoder_layers = 1000"},
		{func(c *Config) { c.Positions, c.MaxLen = "learned", 1<<20 }, "max_len = 1048576"},
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

// TestBatchesThatCannotFitAreRefused decodes with a beam of 2^62 rows and
// scores a source of 300,000 tokens: each is refused, naming the sizes and
// the estimate, before anything is allocated.
func TestBatchesThatCannotFitAreRefused(t *testing.T) {
	for _, name := range []string{"post-norm, sinusoidal", "decoder-only, post-norm"} {
		cfg := decodeConfigs()[name]
		cfg.MaxLen = 1 << 20
		m, params := decodeModel(t, cfg, 1, 1)
		d, err := NewDecoder(nil, m, params)
		if err != nil {
			t.Fatal(err)
		}
		s := DefaultSearch()
		s.Beam = 1 << 62 // times the 2 sources: more than an int holds
		long := make([]int, 300_000)
		for i := range long {
			long[i] = 5
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, errDecode := d.Decode(decodeSources(cfg.Vocab, 2, 1), s)
		_, errScore := ScorePairs(nil, m, params, [][]int{long}, [][]int{{BOSID, 6, EOSID}}, 1)
		runtime.ReadMemStats(&after)
		d.Close()
		if errDecode == nil || !strings.Contains(errDecode.Error(), "4611686018427387904 rows a source") || !strings.Contains(errDecode.Error(), "GB needed") {
			t.Errorf("%s: beam 2^40: %v", name, errDecode)
		}
		if errScore == nil || !strings.Contains(errScore.Error(), "scoring pairs 1 to 1 (sources of up to 300000 tokens") || !strings.Contains(errScore.Error(), "GB needed") {
			t.Errorf("%s: a source of 300,000 tokens: %v", name, errScore)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
			t.Errorf("%s: allocated %d MB before refusing", name, grew>>20)
		}
	}
}

// TestMemoryEstimatesAreLowerBounds scores and decodes batches that fit and
// checks the estimates the memory checks use against what the runs took:
// the activations held at once (the arena) for a forward pass, everything
// allocated for decoding. The checks refuse only what cannot fit.
func TestMemoryEstimatesAreLowerBounds(t *testing.T) {
	for _, name := range []string{"post-norm, sinusoidal", "decoder-only, post-norm", "grouped-query, swiglu"} {
		cfg := decodeConfigs()[name]
		m, params := decodeModel(t, cfg, 1, 1)
		eb := int(params.Dtype().Size())
		src := make([][]int, 4)
		tgt := make([][]int, 4)
		for i := range src {
			for range 200 {
				src[i] = append(src[i], 5+i)
				tgt[i] = append(tgt[i], 6+i)
			}
			tgt[i][0] = BOSID
		}
		rt := graph.CPU()
		if _, err := ScorePairs(rt, m, params, src, tgt, 4); err != nil {
			t.Fatal(err)
		}
		tgtLen := 199
		if cfg.Kind == KindDecoderOnly {
			tgtLen += 200
		}
		est, took := cfg.forwardBytes(eb, 4, 200, tgtLen), float64(rt.ArenaBytes())
		t.Logf("%s: scoring 4 pairs of 200 tokens: estimated %.1f MB, took %.1f MB", name, est/(1<<20), took/(1<<20))
		if est > took {
			t.Errorf("%s: scoring 4 pairs of 200 tokens: estimated %.0f bytes, took %.0f", name, est, took)
		}
		d, err := NewDecoder(nil, m, params)
		if err != nil {
			t.Fatal(err)
		}
		s := DefaultSearch()
		s.MaxLen = 100
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if _, err := d.Decode(src[:3], s); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		d.Close()
		steps := d.roundLen(100 + 1)
		srcLen := 200
		if cfg.Kind == KindDecoderOnly {
			steps, srcLen = d.roundLen(200+100+1), 0
		}
		est, took = cfg.decodeBytes(eb, 3, s.Beam, srcLen, steps), float64(after.TotalAlloc-before.TotalAlloc)
		t.Logf("%s: decoding 3 sources of 200 tokens: estimated %.1f MB, allocated %.1f MB", name, est/(1<<20), took/(1<<20))
		if est > took {
			t.Errorf("%s: decoding 3 sources of 200 tokens: estimated %.0f bytes, took %.0f", name, est, took)
		}
	}
}
