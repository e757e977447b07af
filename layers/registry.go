package layers

import (
	"sort"
	"strings"

	"github.com/pkg/errors"
)

// Registry maps the names a configuration gives its sublayers to the
// constructors that build them, so that a model (and a checkpoint, which
// records the names) can be rebuilt from its configuration. NewRegistry
// holds the built-in variants; a program registers its own in the Registry
// it builds its models with:
//
//	reg := layers.NewRegistry()
//	err := reg.FFN.Register("gated", func(z layers.Sizes) layers.FFN { return Gated{DModel: z.DModel, DFF: z.DFF} })
//
// A Registry is a plain value, not global state: registering in one does
// not change another.
type Registry struct {
	Attention Table[Attention]
	FFN       Table[FFN]
	Norm      Table[Norm]
	Positions Table[Positional]
}

// Built-in variant names.
const (
	AttentionMultiHead    = "multi-head"    // MultiHeadAttention
	AttentionGroupedQuery = "grouped-query" // GroupedQueryAttention with Sizes.KVHeads
	AttentionRotary       = "rotary"        // GroupedQueryAttention with Rotary positions
	FFNReLU               = "relu"          // FeedForward
	FFNSwiGLU             = "swiglu"        // SwiGLU
	NormLayer             = "layer"         // LayerNorm
	NormRMS               = "rms"           // RMSNorm
	PositionsSinusoid     = "sinusoidal"    // Sinusoidal
	PositionsLearned      = "learned"       // Learned
	PositionsNone         = "none"          // NoPositions
)

// NewRegistry returns a registry of the built-in variants: attention
// "multi-head", "grouped-query" (Sizes.KVHeads key/value heads; 1 is
// multi-query attention) and "rotary" (grouped-query attention with rotary
// positions: use it with positions "none"); feed-forward "relu" and
// "swiglu"; norms "layer" and "rms"; positions "sinusoidal", "learned" and
// "none".
func NewRegistry() *Registry {
	return &Registry{
		Attention: Table[Attention]{kind: "attention", byName: map[string]func(Sizes) Attention{
			AttentionMultiHead: func(z Sizes) Attention { return NewMultiHeadAttention(z.DModel, z.Heads, z.AttnDropout) },
			AttentionGroupedQuery: func(z Sizes) Attention {
				return MultiHeadAttention{DModel: z.DModel, Heads: z.Heads, KVHeads: z.KVHeads, Dropout: z.AttnDropout}
			},
			AttentionRotary: func(z Sizes) Attention {
				return MultiHeadAttention{DModel: z.DModel, Heads: z.Heads, KVHeads: z.KVHeads, Dropout: z.AttnDropout, Rotary: !z.Cross}
			},
			AttentionALiBi: func(z Sizes) Attention {
				return MultiHeadAttention{DModel: z.DModel, Heads: z.Heads, KVHeads: z.KVHeads, Dropout: z.AttnDropout, Bias: map[bool]PositionBias{false: ALiBi{}}[z.Cross]}
			},
		}},
		FFN: Table[FFN]{kind: "ffn", byName: map[string]func(Sizes) FFN{
			FFNReLU:   func(z Sizes) FFN { return NewFeedForward(z.DModel, z.DFF) },
			FFNSwiGLU: func(z Sizes) FFN { return SwiGLU{DModel: z.DModel, DFF: z.DFF} },
		}},
		Norm: Table[Norm]{kind: "norm", byName: map[string]func(Sizes) Norm{
			NormLayer: func(z Sizes) Norm { return LayerNorm{DModel: z.DModel, Eps: z.Eps} },
			NormRMS:   func(z Sizes) Norm { return RMSNorm{DModel: z.DModel, Eps: z.Eps} },
		}},
		Positions: Table[Positional]{kind: "positions", byName: map[string]func(Sizes) Positional{
			PositionsSinusoid: func(z Sizes) Positional { return Sinusoidal{DModel: z.DModel} },
			PositionsLearned:  func(z Sizes) Positional { return Learned{MaxLen: z.MaxLen, DModel: z.DModel} },
			PositionsNone:     func(Sizes) Positional { return NoPositions{} },
		}},
	}
}

// Table is one kind of sublayer in a Registry: names and constructors.
// The zero Table is empty and usable.
type Table[T any] struct {
	kind   string
	byName map[string]func(Sizes) T
}

// Register adds the constructor f under name. Names are not empty, hold no
// spaces and are registered once.
func (t *Table[T]) Register(name string, f func(Sizes) T) error {
	switch {
	case name == "" || strings.ContainsAny(name, " \t\n"):
		return errors.Errorf("register %s: name %q is empty or holds spaces", t.kind, name)
	case f == nil:
		return errors.Errorf("register %s %q: no constructor", t.kind, name)
	case t.byName[name] != nil:
		return errors.Errorf("register %s: %q is already registered", t.kind, name)
	}
	if t.byName == nil {
		t.byName = map[string]func(Sizes) T{}
	}
	t.byName[name] = f
	return nil
}

// New builds the variant registered under name for the sizes z. The error
// of an unknown name lists the registered ones.
func (t *Table[T]) New(name string, z Sizes) (T, error) {
	f := t.byName[name]
	if f == nil {
		var zero T
		return zero, errors.Errorf("unknown %s %q: registered are %s", t.kind, name, strings.Join(t.Names(), ", "))
	}
	return f(z), nil
}

// Names lists the registered names in order.
func (t *Table[T]) Names() []string {
	names := make([]string, 0, len(t.byName))
	for n := range t.byName {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Variants names a model's sublayers in a Registry.
type Variants struct {
	Attention, FFN, Norm, Positions string
}

// Layer builds a layer of sizes z from the variants v, a decoder layer if
// cross, its self- and cross-attention both of v.Attention, the latter
// built with Sizes.Cross.
func (r *Registry) Layer(z Sizes, v Variants, cross bool) (Layer, error) {
	l := Layer{Sizes: z, Cross: cross}
	var err error
	if l.SelfAttn, err = r.Attention.New(v.Attention, z); err != nil {
		return l, err
	}
	if cross {
		zc := z
		zc.Cross = true
		l.CrossAttn, _ = r.Attention.New(v.Attention, zc)
	}
	if l.FFN, err = r.FFN.New(v.FFN, z); err != nil {
		return l, err
	}
	l.Norm, err = r.Norm.New(v.Norm, z)
	return l, err
}
