package layers

import (
	"maps"
	"math"
	"slices"
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

// NewRegistry returns a registry of the built-in variants (each Table's
// Names lists them): the names above, and those their own files declare
// (AttentionALiBi, AttentionSlidingWindow), every attention with option
// no_bias.
func NewRegistry() *Registry {
	r := &Registry{Attention: Table[Attention]{kind: "attention"}, FFN: Table[FFN]{kind: "ffn"},
		Norm: Table[Norm]{kind: "norm"}, Positions: Table[Positional]{kind: "positions"}}
	for _, err := range []error{
		r.Attention.Register(AttentionMultiHead, func(z Sizes) Attention { a := attentionOf(z); a.KVHeads = 0; return a }, NoBias),
		r.Attention.Register(AttentionGroupedQuery, func(z Sizes) Attention { return attentionOf(z) }, NoBias),
		r.Attention.Register(AttentionRotary, func(z Sizes) Attention {
			a := attentionOf(z)
			a.Rotary, a.RotaryBase = !z.Cross, z.Options[OptionRotaryBase]
			return a
		}, NoBias, Option{Name: OptionRotaryBase, Default: 10000, Valid: positive, Want: "> 0"}),
		r.Attention.Register(AttentionALiBi, func(z Sizes) Attention { return biased(z, ALiBi{MaxBias: z.Options[OptionALiBiMaxBias]}) },
			NoBias, alibiMaxBias),
		r.Attention.Register(AttentionSlidingWindow, func(z Sizes) Attention { return biased(z, SlidingWindow{Window: int(z.Options[OptionWindow])}) },
			NoBias, windowOption),
		r.FFN.Register(FFNReLU, func(z Sizes) FFN { return NewFeedForward(z.DModel, z.DFF) }),
		r.FFN.Register(FFNSwiGLU, func(z Sizes) FFN { return SwiGLU{DModel: z.DModel, DFF: z.DFF} }),
		r.Norm.Register(NormLayer, func(z Sizes) Norm { return LayerNorm{DModel: z.DModel, Eps: z.Eps} }),
		r.Norm.Register(NormRMS, func(z Sizes) Norm { return RMSNorm{DModel: z.DModel, Eps: z.Eps} }),
		r.Positions.Register(PositionsSinusoid, func(z Sizes) Positional { return Sinusoidal{DModel: z.DModel} }),
		r.Positions.Register(PositionsLearned, func(z Sizes) Positional { return Learned{MaxLen: z.MaxLen, DModel: z.DModel} }),
		r.Positions.Register(PositionsNone, func(Sizes) Positional { return NoPositions{} }),
	} {
		if err != nil {
			panic(err) // the built-in names are registered once
		}
	}
	return r
}

// The options of the built-in variants, by their names in a config.
const (
	OptionNoBias     = "no_bias"     // 1: attention projections without biases
	OptionRotaryBase = "rotary_base" // RoPE's base θ, 10000
)

// attentionOf is the attention of the sizes z: grouped-query with
// z.KVHeads, without biases with option no_bias.
func attentionOf(z Sizes) MultiHeadAttention {
	return MultiHeadAttention{DModel: z.DModel, Heads: z.Heads, KVHeads: z.KVHeads, Dropout: z.AttnDropout, NoBias: z.Options[OptionNoBias] == 1}
}

// biased is the attention of the sizes z whose self-attention has the
// position bias b; cross-attention, between two sequences, has none.
func biased(z Sizes, b PositionBias) Attention {
	a := attentionOf(z)
	if !z.Cross {
		a.Bias = b
	}
	return a
}

// NoBias is the option no_bias of the built-in attentions: 1 makes their
// projections Linears without biases.
var NoBias = Option{Name: OptionNoBias, Default: 0, Valid: func(v float64) bool { return v == 0 || v == 1 }, Want: "0 or 1"}

// positive reports whether v > 0.
func positive(v float64) bool { return v > 0 }

// Option is a setting a variant declares: its name among a config's
// options (Sizes.Options), its default, and the values it takes.
type Option struct {
	Name    string
	Default float64
	// Valid reports whether the variant takes a value; Want says which
	// it takes, for errors.
	Valid func(float64) bool
	Want  string
}

// Check reports a value the option does not take, naming it.
func (o Option) Check(v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) || o.Valid != nil && !o.Valid(v) {
		return errors.Errorf("option %s is %v, want %s", o.Name, v, o.Want)
	}
	return nil
}

// Table is one kind of sublayer in a Registry: names, constructors, and
// the options each declares. The zero Table is empty and usable.
type Table[T any] struct {
	kind    string
	byName  map[string]func(Sizes) T
	options map[string][]Option
}

// Register adds the constructor f under name, with the options it reads
// from Sizes.Options. Names are not empty, hold no spaces and are
// registered once.
func (t *Table[T]) Register(name string, f func(Sizes) T, options ...Option) error {
	switch {
	case name == "" || strings.ContainsAny(name, " \t\n"):
		return errors.Errorf("register %s: name %q is empty or holds spaces", t.kind, name)
	case f == nil:
		return errors.Errorf("register %s %q: no constructor", t.kind, name)
	case t.byName[name] != nil:
		return errors.Errorf("register %s: %q is already registered", t.kind, name)
	}
	if t.byName == nil {
		t.byName, t.options = map[string]func(Sizes) T{}, map[string][]Option{}
	}
	t.byName[name], t.options[name] = f, options
	return nil
}

// Options are the options the variant registered under name declares.
func (t *Table[T]) Options(name string) []Option { return t.options[name] }

// New builds the variant registered under name for the sizes z, its
// options that z.Options leaves out at their defaults. The error of an
// unknown name lists the registered ones.
func (t *Table[T]) New(name string, z Sizes) (T, error) {
	if err := t.Known(name); err != nil {
		var zero T
		return zero, err
	}
	opts := map[string]float64{}
	for _, o := range t.options[name] {
		opts[o.Name] = o.Default
	}
	maps.Copy(opts, z.Options)
	z.Options = opts
	return t.byName[name](z), nil
}

// Known returns nil if a variant is registered under name, and otherwise
// an error that lists the registered ones.
func (t *Table[T]) Known(name string) error {
	if t.byName[name] == nil {
		return errors.Errorf("unknown %s %q: registered are %s", t.kind, name, strings.Join(t.Names(), ", "))
	}
	return nil
}

// Names lists the registered names in order.
func (t *Table[T]) Names() []string {
	return slices.Sorted(maps.Keys(t.byName))
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
