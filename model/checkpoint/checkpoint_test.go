package checkpoint

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/graph/safetensors"
	"github.com/transformer-go/transformer/internal/modeltest"
	"github.com/transformer-go/transformer/model"
)

// smallConfig is a model small enough to build in every test: d_model 8,
// one layer a stack.
func smallConfig() model.Config {
	c, _ := model.Preset("tiny", 11)
	c.DModel, c.Heads, c.DFF, c.EncoderLayers, c.DecoderLayers = 8, 2, 12, 1, 1
	return c
}

// testBatch has ragged rows: padding in sources and targets.
var testBatch = model.Batch{
	Shape:  model.Shape{Batch: 2, SrcLen: 4, TgtLen: 3},
	Src:    []int{5, 6, 7, 2, 8, 2, 0, 0},
	TgtIn:  []int{1, 9, 10, 1, 4, 0},
	TgtOut: []int{9, 10, 2, 4, 2, 0},
}

// writeCheckpoint saves the weights of smallConfig under the config JSON
// raw, after letting spoil change them, and returns the file's path.
func writeCheckpoint(t testing.TB, dir, raw string, spoil func(p *graph.Params)) string {
	t.Helper()
	m, _ := model.New(smallConfig())
	params, err := model.NewParams(m, tensor.Float32, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	if spoil != nil {
		spoil(params)
	}
	var tensors []safetensors.Tensor
	for _, name := range params.Names() {
		ts, err := safetensors.FromDense(name, params.Value(name))
		if err != nil {
			t.Fatal(err)
		}
		tensors = append(tensors, ts)
	}
	path := filepath.Join(dir, "ck.safetensors")
	if err := safetensors.Write(path, tensors, map[string]string{configKey: raw}); err != nil {
		t.Fatal(err)
	}
	return path
}

// configJSON is smallConfig as JSON with the fields of change set (nil:
// left out).
func configJSON(t testing.TB, change map[string]any) string {
	t.Helper()
	js, _ := json.Marshal(smallConfig())
	var fields map[string]any
	if err := json.Unmarshal(js, &fields); err != nil {
		t.Fatal(err)
	}
	for k, v := range change {
		fields[k] = v
		if v == nil {
			delete(fields, k)
		}
	}
	js, _ = json.Marshal(fields)
	return string(js)
}

// TestHostileCheckpoints loads checkpoints whose config or weights are
// absurd: each gets an error naming the problem, without allocating the
// model the config describes.
func TestHostileCheckpoints(t *testing.T) {
	nan := func(p *graph.Params) {
		p.Value("decoder.layers.0.norm2.weight").Data().([]float32)[3] = float32(math.NaN())
	}
	column := func(p *graph.Params) { // [n, 1] for [n]: the same elements, another shape
		v := p.Value("decoder.layers.0.norm2.weight")
		if err := v.Reshape(v.Shape()[0], 1); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name   string
		change map[string]any
		spoil  func(p *graph.Params)
		want   string
	}{
		{"vocab 10^12", map[string]any{"vocab": 1e12}, nil, "vocab is 1000000000000"},
		{"d_ff 10^12", map[string]any{"d_ff": 1e12}, nil, "d_ff is 1000000000000"},
		{"d_model 2^40", map[string]any{"d_model": 1 << 40, "heads": 1}, nil, "d_model is 1099511627776"},
		{"learned max_len 10^12", map[string]any{"positions": "learned", "max_len": 1e12}, nil, "max_len is 1000000000000"},
		{"layers 10^9", map[string]any{"encoder_layers": 1e9}, nil, "encoder_layers is 1000000000"},
		{"vocab 2×10^6 in a small file", map[string]any{"vocab": 2e6}, nil, "but its config (vocab 2000000, d_model 8, d_ff 12, 1+1 layers) makes 16001368 parameters"},
		{"unknown field", map[string]any{"layerz": 3}, nil, `unknown field "layerz"`},
		{"negative dropout", map[string]any{"dropout": -1}, nil, "dropout is -1"},
		{"NaN weight", nil, nan, "tensor decoder.layers.0.norm2.weight holds NaN at element 3"},
		{"a vector saved as a column", nil, column, "tensor decoder.layers.0.norm2.weight has shape [8 1], the model's is (8)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeCheckpoint(t, t.TempDir(), configJSON(t, tt.change), tt.spoil)
			var err error
			grew := modeltest.Allocated(func() {
				var ck *File
				if ck, err = Read(path); err == nil {
					_, _, err = ck.Model(tensor.Float32, nil)
				}
			})
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("error %v, want one naming %s and %q", err, path, tt.want)
			}
			if grew > 64<<20 {
				t.Errorf("allocated %d MB before refusing", grew>>20)
			}
		})
	}
}

// TestConfigWithTrailingData refuses a config file, or a checkpoint's
// config, with more after its JSON object: a second object would otherwise
// be ignored without a word.
func TestConfigWithTrailingData(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")
	for _, tail := range []string{`{"d_model": 16}`, "x", "}", `"layers"`} {
		if err := os.WriteFile(path, []byte(`{"d_model": 8} `+tail), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := model.LoadConfig(path, smallConfig())
		if err == nil || !strings.Contains(err.Error(), path+": more after the JSON object that ends at byte 14") {
			t.Errorf("config followed by %q: %v", tail, err)
		}
		ck := writeCheckpoint(t, dir, configJSON(t, nil)+tail, nil)
		if _, err := Read(ck); err == nil || !strings.Contains(err.Error(), "more after the JSON object") {
			t.Errorf("checkpoint config followed by %q: %v", tail, err)
		}
	}
	if err := os.WriteFile(path, []byte("{\"d_model\": 8}\n \t\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := model.LoadConfig(path, smallConfig()); err != nil {
		t.Errorf("config followed by white space: %v", err)
	}
}

// FuzzRead feeds Read and File.Model arbitrary files,
// starting from a valid checkpoint and its config's variations: every input
// either loads a model with finite weights or gives an error, never a
// panic, a hang or a huge allocation.
func FuzzRead(f *testing.F) {
	dir := f.TempDir()
	for _, change := range []map[string]any{nil, {"vocab": 2e6}, {"positions": "learned", "max_len": 64}, {"pre_norm": true, "norm": "rms"},
		{"attention": "alibi", "positions": "none", "options": map[string]any{"alibi_max_bias": 4}}} {
		data, err := os.ReadFile(writeCheckpoint(f, dir, configJSON(f, change), nil))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "fuzz.safetensors")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		ck, err := Read(path)
		if err != nil {
			return
		}
		_, params, err := ck.Model(tensor.Float32, nil)
		if err != nil {
			return
		}
		for _, name := range params.Names() {
			for _, v := range graph.Float64s(params.Value(name)) {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("loaded %s, which holds %v, without error", name, v)
				}
			}
		}
	})
}

func TestCheckpointRoundTrip(t *testing.T) {
	cfg := smallConfig()
	m, _ := model.New(cfg)
	params, err := model.NewParams(m, tensor.Float32, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "model.safetensors")
	if err := Save(path, cfg, params, map[string]string{"step": "7"}); err != nil {
		t.Fatal(err)
	}
	ck, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if !ck.Config.Equal(cfg) || ck.Meta["step"] != "7" {
		t.Fatalf("config %+v, meta %v", ck.Config, ck.Meta)
	}
	other, _ := model.NewParams(m, tensor.Float32, rand.New(rand.NewPCG(9, 9)))
	if err := ck.Restore(other); err != nil {
		t.Fatal(err)
	}
	for _, name := range params.Names() {
		a, b := params.Value(name).Data().([]float32), other.Value(name).Data().([]float32)
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("%s[%d]: %v restored as %v", name, i, a[i], b[i])
			}
		}
	}
	// A model of another shape is refused, naming the parameters that differ.
	bigger := cfg
	bigger.DFF = 16
	mb, _ := model.New(bigger)
	pb, _ := model.NewParams(mb, tensor.Float32, rand.New(rand.NewPCG(1, 2)))
	err = ck.Restore(pb)
	if err == nil || !strings.Contains(err.Error(), "encoder.layers.0.feed_forward.linear1.weight") {
		t.Fatalf("restoring into a different model: %v", err)
	}
}
