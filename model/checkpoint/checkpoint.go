// Package checkpoint writes a model's weights and config to a
// safetensors file and reads them back, rebuilding the model of whatever
// kind and variants they record; it also imports the weights of a PyTorch
// encoder-decoder. Every file is checked before its model is allocated:
// its config against model.Config's limits, its tensors' names and shapes
// against the parameters the model declares, the memory the weights take,
// and every value for being finite.
package checkpoint

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/pkg/errors"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/graph/safetensors"
	"github.com/transformer-go/transformer/layers"
	"github.com/transformer-go/transformer/model"
)

// configKey holds the model's JSON config in a checkpoint's metadata.
const configKey = "config"

// Save writes the parameters to a safetensors file, each tensor under its
// parameter name, with the config (and any extra metadata) in the header.
// The write is atomic.
func Save(path string, cfg model.Config, params *graph.Params, meta map[string]string) error {
	data, err := json.Marshal(cfg)
	if err != nil {
		return errors.Wrap(err, "encoding config")
	}
	md := map[string]string{configKey: string(data)}
	maps.Copy(md, meta)
	var tensors []safetensors.Tensor
	for _, name := range params.Names() {
		t, err := safetensors.FromDense(name, params.Value(name))
		if err != nil {
			return errors.Wrapf(err, "checkpoint %s", path)
		}
		tensors = append(tensors, t)
	}
	return safetensors.Write(path, tensors, md)
}

// File is a checkpoint read from disk.
type File struct {
	Path   string
	Config model.Config
	// Meta is the header's metadata, the config included.
	Meta map[string]string
	file *safetensors.File
}

// Read reads a checkpoint written by Save and checks its config: known
// fields only, sizes within model.Config.Validate's limits.
func Read(path string) (*File, error) {
	f, err := safetensors.Read(path)
	if err != nil {
		return nil, err
	}
	raw, ok := f.Metadata[configKey]
	if !ok {
		return nil, errors.Errorf("checkpoint %s has no config in its metadata", path)
	}
	cfg, err := model.ParseConfig([]byte(raw))
	if err != nil {
		return nil, errors.Wrapf(err, "checkpoint %s", path)
	}
	return &File{Path: path, Config: cfg, Meta: f.Metadata, file: f}, nil
}

// Fits checks, from shapes alone, that the checkpoint holds exactly the
// parameters of shapes (see model.ParamShapes), so a loader can refuse it
// before allocating its model. The error names each tensor that is
// missing, misshapen or unexpected.
func (c *File) Fits(shapes *graph.Params) error {
	want := map[string]tensor.Shape{}
	for _, name := range shapes.Names() {
		want[name] = shapes.Shape(name)
	}
	return checkTensors(c.file, want, fmt.Sprintf("checkpoint %s does not fit the model", c.Path))
}

// checkTensors refuses, before anything is allocated, a file whose tensors
// are not want's names with their shapes: the error, headed head, lists
// every tensor that is missing, misshapen or unexpected.
func checkTensors(f *safetensors.File, want map[string]tensor.Shape, head string) error {
	var problems []string
	for name, shape := range want {
		t, ok := f.Tensors[name]
		switch {
		case !ok:
			problems = append(problems, name+": missing")
		case !slices.Equal(shape, tensor.Shape(t.Shape)): // Eq takes [n, 1] for [n]
			problems = append(problems, fmt.Sprintf("tensor %s has shape %v, the model's is %v", name, t.Shape, shape))
		}
	}
	for _, name := range f.Names() {
		if _, ok := want[name]; !ok {
			problems = append(problems, name+": unexpected, no parameter of the model takes it")
		}
	}
	if len(problems) > 0 {
		slices.Sort(problems)
		return errors.Errorf("%s:\n  %s", head, strings.Join(problems, "\n  "))
	}
	return nil
}

// Restore copies the checkpoint's tensors into params. The checkpoint must
// fit params (see Fits) and hold only finite values; the error names the
// first tensor that does not.
func (c *File) Restore(params *graph.Params) error {
	if err := c.Fits(params); err != nil {
		return err
	}
	for _, name := range params.Names() {
		t, err := readFinite(c.file, name, params.Dtype())
		if err == nil {
			err = params.Set(name, t)
		}
		if err != nil {
			return errors.Wrapf(err, "checkpoint %s", c.Path)
		}
	}
	return nil
}

// readFinite reads the tensor name of f in element type dt; the error
// names its first NaN or infinite element.
func readFinite(f *safetensors.File, name string, dt tensor.Dtype) (*tensor.Dense, error) {
	t, err := f.Dense(name, dt)
	if err != nil {
		return nil, err
	}
	for i, v := range graph.Float64s(t) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, errors.Errorf("tensor %s holds %v at element %d: the weights are not finite", name, v, i)
		}
	}
	return t, nil
}

// Load reads the checkpoint at path and rebuilds its model, of whatever
// kind, with its weights of element type dt: Read, then File.Model. The
// variants the checkpoint's config names are looked up in reg (nil: the
// built-in ones), so a program that registered its own variants to train
// a model passes the same registry here.
func Load(path string, dt tensor.Dtype, reg *layers.Registry) (model.Model, *graph.Params, error) {
	c, err := Read(path)
	if err != nil {
		return nil, nil, err
	}
	return c.Model(dt, reg)
}

// Model builds the model the checkpoint's config describes (model.Rebuild:
// its kind, its variants from reg, nil meaning the built-in ones) with the
// checkpoint's weights, of element type dt. It checks the tensors' names
// and shapes and the memory the weights take before allocating them.
func (c *File) Model(dt tensor.Dtype, reg *layers.Registry) (model.Model, *graph.Params, error) {
	m, err := model.Rebuild(c.Config, reg)
	if err != nil {
		return nil, nil, errors.Wrapf(err, "checkpoint %s", c.Path)
	}
	shapes, err := model.ParamShapes(m)
	if err != nil {
		return nil, nil, err
	}
	if err := checkSize(c.file, shapes, c.Config); err != nil {
		return nil, nil, errors.Wrapf(err, "checkpoint %s", c.Path)
	}
	if err := c.Fits(shapes); err != nil {
		return nil, nil, err
	}
	params, err := model.NewParams(m, dt, rand.New(rand.NewPCG(0, 0)))
	if err != nil {
		return nil, nil, err
	}
	return m, params, c.Restore(params)
}

// Params reads the checkpoint's tensors, whatever model they belong to,
// into parameters of element type dt, without building a model: what
// averaging needs. Every value must be finite.
func (c *File) Params(dt tensor.Dtype) (*graph.Params, error) {
	params, err := graph.NewParams(dt, rand.New(rand.NewPCG(0, 0)))
	if err != nil {
		return nil, err
	}
	for _, name := range c.file.Names() {
		if _, err := params.Get(name, tensor.Shape(c.file.Tensors[name].Shape), graph.Zeros); err != nil {
			return nil, errors.Wrapf(err, "checkpoint %s", c.Path)
		}
	}
	return params, c.Restore(params)
}

// checkSize refuses, before anything is allocated, a file whose values are
// not as many as the parameters shapes of the model of cfg, or whose
// weights take more memory than this process is given.
func checkSize(f *safetensors.File, shapes *graph.Params, cfg model.Config) error {
	var held int64
	for _, t := range f.Tensors {
		n, err := t.NumElements()
		if err != nil {
			return err
		}
		held += int64(n)
	}
	if need := int64(shapes.Count()); held != need {
		return errors.Errorf("the file holds %d values, but its config (vocab %d, d_model %d, d_ff %d, %d+%d layers) makes %d parameters",
			held, cfg.Vocab, cfg.DModel, cfg.DFF, cfg.EncoderLayers, cfg.DecoderLayers, need)
	}
	return cfg.CheckMemory(nil, cfg.FootprintOf(shapes, 4, 0), false)
}
