package model

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"text/tabwriter"

	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
)

// Init is a new model of cfg (FromConfig, with the built-in variants) and
// its parameters of element type dt drawn from seed (NewParams): the
// weights cmd/train's run with -seed seed starts from.
func Init(cfg Config, dt tensor.Dtype, seed uint64) (Model, *graph.Params, error) {
	m, err := FromConfig(cfg, nil)
	if err != nil {
		return nil, nil, err
	}
	params, err := NewParams(m, dt, rand.New(rand.NewPCG(seed, 2)))
	return m, params, err
}

// NewParams creates every parameter of m, of element type dt, initialised from
// rng (Xavier-uniform weights, N(0, 1/dModel) embeddings, zero biases, unit
// norm gains).
func NewParams(m Model, dt tensor.Dtype, rng *rand.Rand) (*graph.Params, error) {
	params, err := graph.NewParams(dt, rng)
	if err != nil {
		return nil, err
	}
	s := graph.NewScope(params)
	m.Build(s, Shape{Batch: 1, SrcLen: 1, TgtLen: 1})
	return params, s.Err()
}

// ParamShapes records the names and shapes of m's parameters without
// allocating them (see graph.NewParamShapes), for Summary and counts.
func ParamShapes(m Model) (*graph.Params, error) {
	params := graph.NewParamShapes(tensor.Float32)
	s := graph.NewScope(params)
	m.Build(s, Shape{Batch: 1, SrcLen: 1, TgtLen: 1})
	return params, s.Err()
}

// Summary describes the parameters layer by layer: a line for each top-level
// part ("embed") and each layer ("encoder.layers.0") with its sublayers'
// counts, and a last line "parameters: N".
func Summary(params *graph.Params) string {
	type group struct {
		name  string
		total int
		parts []string
		sizes map[string]int
	}
	var groups []*group
	byName := map[string]*group{}
	for _, name := range params.Names() {
		g, part := split(name)
		gr, ok := byName[g]
		if !ok {
			gr = &group{name: g, sizes: map[string]int{}}
			byName[g] = gr
			groups = append(groups, gr)
		}
		if _, ok := gr.sizes[part]; !ok {
			gr.parts = append(gr.parts, part)
		}
		n := params.Shape(name).TotalSize()
		gr.sizes[part] += n
		gr.total += n
	}
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 4, 2, ' ', tabwriter.AlignRight)
	for _, g := range groups {
		parts := make([]string, len(g.parts))
		for i, p := range g.parts {
			parts[i] = fmt.Sprintf("%s %d", p, g.sizes[p])
		}
		fmt.Fprintf(w, "%s\t%d\t\t%s\n", g.name, g.total, strings.Join(parts, ", "))
	}
	w.Flush()
	fmt.Fprintf(&b, "parameters: %d\n", params.Count())
	return b.String()
}

// split cuts a parameter name into its group (a layer, or the first part) and
// its part within the group (a sublayer, or the rest).
func split(name string) (group, part string) {
	f := strings.Split(name, ".")
	if len(f) >= 4 && f[1] == "layers" {
		return strings.Join(f[:3], "."), f[3]
	}
	if len(f) >= 3 {
		return f[0], f[1]
	}
	return f[0], strings.Join(f[1:], ".")
}
