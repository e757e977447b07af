package model

import (
	"encoding/json"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/pkg/errors"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/graph/safetensors"
)

// configKey holds the model's JSON config in a checkpoint's metadata.
const configKey = "config"

// SaveCheckpoint writes the parameters to a safetensors file, each tensor under
// its parameter name, with the config (and any extra metadata) in the header.
// The write is atomic.
func SaveCheckpoint(path string, cfg Config, params *graph.Params, meta map[string]string) error {
	data, err := json.Marshal(cfg)
	if err != nil {
		return errors.Wrap(err, "encoding config")
	}
	md := map[string]string{configKey: string(data)}
	for k, v := range meta {
		md[k] = v
	}
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

// Checkpoint is a checkpoint read from disk.
type Checkpoint struct {
	Path   string
	Config Config
	// Meta is the header's metadata, the config included.
	Meta map[string]string
	file *safetensors.File
}

// LoadCheckpoint reads a checkpoint written by SaveCheckpoint and checks its config.
func LoadCheckpoint(path string) (*Checkpoint, error) {
	f, err := safetensors.Read(path)
	if err != nil {
		return nil, err
	}
	raw, ok := f.Metadata[configKey]
	if !ok {
		return nil, errors.Errorf("checkpoint %s has no config in its metadata", path)
	}
	var cfg Config
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		return nil, errors.Wrapf(err, "checkpoint %s: config", path)
	}
	if err := cfg.Validate(); err != nil {
		return nil, errors.Wrapf(err, "checkpoint %s", path)
	}
	return &Checkpoint{Path: path, Config: cfg, Meta: f.Metadata, file: f}, nil
}

// Restore copies the checkpoint's tensors into params. Every parameter must be
// in the checkpoint with its shape, and every tensor of the checkpoint must be
// a parameter; the error names each one that is not.
func (c *Checkpoint) Restore(params *graph.Params) error {
	var problems []string
	seen := map[string]bool{}
	for _, name := range params.Names() {
		seen[name] = true
		t, err := c.file.Dense(name, params.Dtype())
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		if err := params.Set(name, t); err != nil {
			problems = append(problems, err.Error())
		}
	}
	for _, name := range c.file.Names() {
		if !seen[name] {
			problems = append(problems, "unexpected tensor "+name)
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return errors.Errorf("checkpoint %s does not fit the model:\n  %s", c.Path, strings.Join(problems, "\n  "))
	}
	return nil
}

// Transformer builds the encoder-decoder of the checkpoint's config with the
// checkpoint's weights, of element type dt.
func (c *Checkpoint) Transformer(dt tensor.Dtype) (*Transformer, *graph.Params, error) {
	m, err := New(c.Config)
	if err != nil {
		return nil, nil, err
	}
	params, err := NewParams(m, dt, rand.New(rand.NewPCG(0, 0)))
	if err != nil {
		return nil, nil, err
	}
	return m, params, c.Restore(params)
}
