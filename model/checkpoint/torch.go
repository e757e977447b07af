package checkpoint

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/pkg/errors"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/graph/safetensors"
	"github.com/transformer-go/transformer/model"
)

// ImportTorch reads the weights of a PyTorch encoder-decoder built from
// torch.nn.TransformerEncoderLayer and TransformerDecoderLayer (batch_first,
// ReLU, LayerNorm eps 1e-5; post-norm without a final stack norm, or
// norm_first with a final LayerNorm on each stack, encoder.norm.* and
// decoder.norm.*, which make a pre-norm Config) and a tied embedding, saved
// with safetensors under these names:
//
//	embed.weight                                   [vocab, d]
//	encoder.layers.i.self_attn.in_proj_weight      [3d, d]  (rows: q, k, v)
//	encoder.layers.i.self_attn.in_proj_bias        [3d]
//	encoder.layers.i.self_attn.out_proj.{weight,bias}
//	encoder.layers.i.linear1.{weight,bias}         [dFF, d], [dFF]
//	encoder.layers.i.linear2.{weight,bias}         [d, dFF], [d]
//	encoder.layers.i.norm1.{weight,bias}, norm2.*
//	decoder.layers.i.* the same, with multihead_attn.* (cross-attention) and norm3.*
//
// The sizes come from the shapes; heads cannot, so it is given. The model
// adds sinusoidal positions from 0 to sqrt(d)·embed(x) and projects onto the
// vocabulary with embed.weightᵀ, as model.Transformer does.
func ImportTorch(path string, heads int, dt tensor.Dtype) (model.Config, *graph.Params, error) {
	f, err := safetensors.Read(path)
	if err != nil {
		return model.Config{}, nil, err
	}
	var m *model.Transformer
	var shapes *graph.Params
	cfg, err := torchConfig(f, heads)
	if err == nil {
		m, err = model.New(cfg)
	}
	if err == nil {
		shapes, err = model.ParamShapes(m)
	}
	if err == nil {
		err = checkTorch(f, shapes, cfg)
	}
	if err == nil {
		err = cfg.CheckMemory(nil, cfg.FootprintOf(shapes, 4, 0), false)
	}
	if err != nil {
		return model.Config{}, nil, errors.Wrapf(err, "importing %s", path)
	}
	params, err := model.NewParams(m, dt, rand.New(rand.NewPCG(0, 0)))
	if err != nil {
		return model.Config{}, nil, err
	}
	if err := copyTorch(f, params); err != nil {
		return model.Config{}, nil, errors.Wrapf(err, "importing %s", path)
	}
	return cfg, params, nil
}

// torchConfig infers the model's sizes from the tensor shapes.
func torchConfig(f *safetensors.File, heads int) (model.Config, error) {
	emb, ok := f.Tensors["embed.weight"]
	if !ok || len(emb.Shape) != 2 {
		return model.Config{}, errors.New("no embed.weight matrix")
	}
	cfg, err := model.Preset("base", emb.Shape[0])
	if err != nil {
		return model.Config{}, err
	}
	cfg.DModel, cfg.Heads, cfg.Dropout, cfg.LabelSmoothing = emb.Shape[1], heads, 0, 0
	cfg.EncoderLayers, cfg.DecoderLayers = countLayers(f, "encoder"), countLayers(f, "decoder")
	_, cfg.PreNorm = f.Tensors["encoder.norm.weight"]
	for _, stack := range []string{"encoder", "decoder"} {
		if t, ok := f.Tensors[stack+".layers.0.linear1.weight"]; ok && len(t.Shape) == 2 {
			cfg.DFF = t.Shape[0]
		}
	}
	return cfg, cfg.Validate()
}

// countLayers counts the layers i with a stack.layers.i.norm1.weight.
func countLayers(f *safetensors.File, stack string) int {
	n := 0
	for {
		if _, ok := f.Tensors[fmt.Sprintf("%s.layers.%d.norm1.weight", stack, n)]; !ok {
			return n
		}
		n++
	}
}

// checkTorch refuses, before anything is allocated, a file whose tensors
// are not those of the parameters shapes of the model of cfg, q, k and v
// packed: the import is complete or refused (a layer without norm1.weight
// is not counted, and its other tensors are not left out silently).
func checkTorch(f *safetensors.File, shapes *graph.Params, cfg model.Config) error {
	want := map[string]tensor.Shape{}
	for _, name := range shapes.Names() {
		src, block := torchSource(name)
		want[src] = shapes.Shape(name).Clone()
		if block >= 0 {
			want[src][0] *= 3
		}
	}
	return checkTensors(f, want, fmt.Sprintf("the tensors are not those of a model of %d encoder and %d decoder layers", cfg.EncoderLayers, cfg.DecoderLayers))
}

// copyTorch sets every parameter from its PyTorch tensor (checkTorch checked
// their shapes), taking its third of the packed q, k, v projections.
func copyTorch(f *safetensors.File, params *graph.Params) error {
	for _, name := range params.Names() {
		src, block := torchSource(name)
		t, err := readFinite(f, src, tensor.Float64)
		if err != nil {
			return errors.Wrapf(err, "%s (from %s)", name, src)
		}
		shape, vals := params.Shape(name), graph.Float64s(t)
		if block >= 0 {
			n := shape.TotalSize()
			vals = vals[block*n : (block+1)*n]
		}
		if err := params.Set(name, graph.FromFloat64s(tensor.Float64, vals, shape...)); err != nil {
			return err
		}
	}
	return nil
}

// torchSource names the PyTorch tensor a parameter comes from and, for the
// q, k and v projections packed in one tensor, which third of it (0, 1, 2;
// -1 for a tensor that is not packed).
func torchSource(name string) (src string, block int) {
	src = strings.NewReplacer(".cross_attn.", ".multihead_attn.", ".feed_forward.", ".").Replace(name)
	for i, proj := range []string{"q_proj", "k_proj", "v_proj"} {
		for _, kind := range []string{"weight", "bias"} {
			if suffix := "." + proj + "." + kind; strings.HasSuffix(src, suffix) {
				return strings.TrimSuffix(src, suffix) + ".in_proj_" + kind, i
			}
		}
	}
	return src, -1
}
