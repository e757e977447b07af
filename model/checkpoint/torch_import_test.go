package checkpoint

import (
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/graph/safetensors"
	"github.com/transformer-go/transformer/model"
)

// torchTensors lays params out as ImportTorch reads them: under their
// PyTorch names, q, k and v packed into one in_proj tensor.
func torchTensors(t *testing.T, params *graph.Params) map[string]safetensors.Tensor {
	t.Helper()
	packed := map[string][]*tensor.Dense{}
	out := map[string]safetensors.Tensor{}
	for _, name := range params.Names() {
		src, block := torchSource(name)
		if block < 0 {
			ts, err := safetensors.FromDense(src, params.Value(name))
			if err != nil {
				t.Fatal(err)
			}
			out[src] = ts
			continue
		}
		if packed[src] == nil {
			packed[src] = make([]*tensor.Dense, 3)
		}
		packed[src][block] = params.Value(name)
	}
	for src, blocks := range packed {
		var vals []float64
		for _, b := range blocks {
			vals = append(vals, graph.Float64s(b)...)
		}
		shape := blocks[0].Shape().Clone()
		shape[0] *= 3
		ts, err := safetensors.FromDense(src, graph.FromFloat64s(tensor.Float32, vals, shape...))
		if err != nil {
			t.Fatal(err)
		}
		out[src] = ts
	}
	return out
}

// TestImportTorchIsCompleteOrRefused imports a file with every tensor, then
// files with one missing or one extra: a missing norm1.weight once made the
// import count one layer less and leave the layer's other tensors out.
func TestImportTorchIsCompleteOrRefused(t *testing.T) {
	cfg, err := model.Preset("tiny", 11)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DModel, cfg.Heads, cfg.DFF, cfg.EncoderLayers, cfg.DecoderLayers, cfg.Dropout, cfg.LabelSmoothing = 8, 2, 16, 2, 2, 0, 0
	m, err := model.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	params, err := model.NewParams(m, tensor.Float32, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	full := torchTensors(t, params)
	write := func(drop, add string) string {
		var ts []safetensors.Tensor
		for name, tt := range full {
			if name != drop {
				ts = append(ts, tt)
			}
		}
		if add != "" {
			extra := full["embed.weight"]
			extra.Name = add
			ts = append(ts, extra)
		}
		path := filepath.Join(t.TempDir(), "torch.safetensors")
		if err := safetensors.Write(path, ts, nil); err != nil {
			t.Fatal(err)
		}
		return path
	}
	got, imported, err := ImportTorch(write("", ""), 2, tensor.Float32)
	if err != nil {
		t.Fatal(err)
	}
	if got.DecoderLayers != 2 || got.EncoderLayers != 2 {
		t.Fatalf("imported %d encoder and %d decoder layers, want 2 and 2", got.EncoderLayers, got.DecoderLayers)
	}
	for _, name := range params.Names() {
		if !slices.Equal(graph.Float64s(params.Value(name)), graph.Float64s(imported.Value(name))) {
			t.Errorf("%s differs after the import", name)
		}
	}
	for _, tc := range []struct{ drop, add, want string }{
		{drop: "decoder.layers.1.norm1.weight", want: "of 2 encoder and 1 decoder layers:\n  decoder.layers.1.linear1.bias: unexpected"},
		{drop: "encoder.layers.0.linear2.bias", want: "encoder.layers.0.linear2.bias: missing"},
		{add: "decoder.layers.2.norm1.bias", want: "decoder.layers.2.norm1.bias: unexpected"},
	} {
		_, _, err := ImportTorch(write(tc.drop, tc.add), 2, tensor.Float32)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("without %q, with %q: %v, want an error saying %q", tc.drop, tc.add, err, tc.want)
		}
	}
}
