package model

import (
	"strings"
	"testing"
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

func TestCheckMemoryNamesTheField(t *testing.T) {
	cfg, _ := Preset("base", 37000)
	if err := cfg.checkMemory(true, 4096, 16<<30); err != nil {
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
		err := c.checkMemory(false, 4096, 2<<30)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "2.0 GB available") {
			t.Errorf("error %v, want one naming %q and the 2.0 GB available", err, tt.want)
		}
	}
}
