package inference_test

import (
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/inference"
	"github.com/transformer-go/transformer/internal/modeltest"
	"github.com/transformer-go/transformer/internal/onnxtest"
	"github.com/transformer-go/transformer/layers"
	"github.com/transformer-go/transformer/model"
	"github.com/transformer-go/transformer/model/decode"
)

// exportTo writes the ONNX files of m into a new directory and returns it.
func exportTo(t *testing.T, m model.Model, params *graph.Params, sh inference.ONNXShape) string {
	t.Helper()
	files, err := inference.ExportONNX(m, params, sh)
	if err != nil {
		t.Fatal(err)
	}
	if names := slices.Sorted(maps.Keys(files)); !slices.Equal(names, inference.ONNXFiles(m)) {
		t.Fatalf("exported %v, want inference.ONNXFiles' %v", names, inference.ONNXFiles(m))
	}
	dir := t.TempDir()
	var paths []string
	for name, b := range files {
		paths = append(paths, filepath.Join(dir, name))
		if err := os.WriteFile(paths[len(paths)-1], b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	onnxtest.Check(t, paths...)
	return dir
}

// TestExportONNXVariants exports a small model of every built-in variant
// that decoding must get right (internal/modeltest: grouped-query and
// multi-query attention, rotary positions, ALiBi, sliding windows,
// SwiGLU, RMSNorm, learned positions, pre-norm; of both kinds that
// generate) with random float32 weights, and checks the export against
// ONNX Runtime: the scorer's log-probabilities within 1e-4 relative, and
// greedy decoding (cmd/export's greedy.js) the same tokens as decode's on
// 6 sources, the step graph's positions (those of a 10-token prompt and 50
// tokens more, within max_len) bounding both alike.
func TestExportONNXVariants(t *testing.T) {
	if testing.Short() {
		t.Skip("runs eleven models in ONNX Runtime: not with -short")
	}
	onnxtest.Require(t)
	configs := modeltest.Configs()
	for _, name := range slices.Sorted(maps.Keys(configs)) {
		t.Run(name, func(t *testing.T) {
			cfg := configs[name]
			m, err := model.FromConfig(cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			params, err := model.NewParams(m, tensor.Float32, rand.New(rand.NewPCG(3, 4)))
			if err != nil {
				t.Fatal(err)
			}
			srcs, tgts := modeltest.Sources(cfg.Vocab, 6, 1), modeltest.Sources(cfg.Vocab, 6, 2)
			for i := range tgts {
				tgts[i] = tgts[i][:len(tgts[i])-1]
			}
			sh := inference.ONNXShape{Batch: 3, SrcLen: 10, TgtLen: 11, Steps: min(cfg.MaxLen, 2*10+decode.DefaultExtraLen)}
			dir := exportTo(t, m, params, sh)
			onnxtest.CheckScorer(t, m, params, dir, onnxtest.PadBatch(m.Layout(), srcs, tgts, sh.Batch, sh.SrcLen, sh.TgtLen))
			onnxtest.CheckGreedy(t, m, params, dir, srcs)
		})
	}
}

// double is an op of one's own without an ONNX form, y = 2x.
func double(s *graph.Scope, x *G.Node) *G.Node {
	twice := func(y graph.Operand[float32], in []graph.Operand[float32]) error {
		for i, v := range in[0].Data {
			y.Data[i] = 2 * v
		}
		return nil
	}
	return s.Apply(graph.Op{Name: "my_double", Arity: 1, Shape: graph.SameShape, F32: graph.Kernels[float32]{Forward: twice}}, x)
}

// doubleFFN is a feed-forward sublayer of one's own made of that op.
type doubleFFN struct{}

func (doubleFFN) Apply(s *graph.Scope, x *G.Node) *G.Node { return double(s, x) }

// scorerOnly is a model of one's own kind that neither generates nor tags.
type scorerOnly struct{ model.Model }

// TestExportONNXRefuses checks what ExportONNX refuses, naming it: a
// variant of one's own whose op has no ONNX form, a model that neither
// generates nor tags, and sizes out of range.
func TestExportONNXRefuses(t *testing.T) {
	reg := layers.NewRegistry()
	if err := reg.FFN.Register("double", func(layers.Sizes) layers.FFN { return doubleFFN{} }); err != nil {
		t.Fatal(err)
	}
	cfg := modeltest.Configs()["post-norm, sinusoidal"]
	own := cfg
	own.FFN = "double"
	m, err := model.FromConfig(own, reg)
	if err != nil {
		t.Fatal(err)
	}
	params, err := model.NewParams(m, tensor.Float32, rand.New(rand.NewPCG(3, 4)))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := model.FromConfig(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	plainParams, err := model.NewParams(plain, tensor.Float32, rand.New(rand.NewPCG(3, 4)))
	if err != nil {
		t.Fatal(err)
	}
	ok := inference.ONNXShape{Batch: 1, SrcLen: 4, TgtLen: 4, Steps: 8}
	for _, tc := range []struct {
		name   string
		m      model.Model
		params *graph.Params
		sh     inference.ONNXShape
		want   string
	}{
		{"an op without a form", m, params, ok, "my_double"},
		{"a model that neither generates nor tags", scorerOnly{plain}, plainParams, ok, "neither generates nor tags"},
		{"no rows", plain, plainParams, inference.ONNXShape{SrcLen: 4, TgtLen: 4, Steps: 8}, "0 rows"},
		{"steps above max_len", plain, plainParams, inference.ONNXShape{Batch: 1, SrcLen: 4, TgtLen: 4, Steps: cfg.MaxLen + 1}, "decoding steps"},
		{"no source positions", plain, plainParams, inference.ONNXShape{Batch: 1, TgtLen: 4, Steps: 8}, "0 source positions"},
	} {
		files, err := inference.ExportONNX(tc.m, tc.params, tc.sh)
		if err == nil || !strings.Contains(err.Error(), tc.want) || files != nil {
			t.Errorf("%s: %d files, %v; want an error with %q", tc.name, len(files), err, tc.want)
		}
	}
}

// TestExportONNXVariantsCoverTheRegistry checks that the configs
// TestExportONNXVariants exports name every variant registered in
// layers.NewRegistry, so that a variant registered later is exported and
// checked against ONNX Runtime too (or refused, by name, there).
func TestExportONNXVariantsCoverTheRegistry(t *testing.T) {
	used := map[string]bool{}
	for _, cfg := range modeltest.Configs() {
		v := cfg.Variants()
		for _, name := range []string{"attention " + v.Attention, "ffn " + v.FFN, "norm " + v.Norm, "positions " + v.Positions} {
			used[name] = true
		}
	}
	reg := layers.NewRegistry()
	for table, names := range map[string][]string{"attention": reg.Attention.Names(), "ffn": reg.FFN.Names(), "norm": reg.Norm.Names(), "positions": reg.Positions.Names()} {
		if len(names) == 0 {
			t.Errorf("the registry has no %s variants", table)
		}
		for _, name := range names {
			if !used[table+" "+name] {
				t.Errorf("%s %s is registered, but no config of modeltest.Configs uses it: add one, which TestExportONNXVariants exports", table, name)
			}
		}
	}
}
