package layers

import (
	"math/rand/v2"
	"slices"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
)

// Small sizes keep the finite differences cheap: batch 2, lengths 3 and 4.
var sizes = Sizes{DModel: 8, Heads: 2, DFF: 12, Dropout: 0.1, AttnDropout: 0.1, Eps: 1e-5}

// srcIDs and tgtIDs are two padded sequences each (pad = 0).
var (
	srcIDs = []int{5, 6, 7, 0, 8, 9, 0, 0} // [2, 4]
	tgtIDs = []int{1, 5, 6, 1, 7, 0}       // [2, 3]
)

func input(s *graph.Scope, name string, length int) *G.Node {
	return s.Param(name, tensor.Shape{2, length, sizes.DModel}, graph.Normal(1))
}

func srcMask(s *graph.Scope) *G.Node {
	return s.Constant("src_mask", PaddingMask(s.Dtype(), srcIDs, 2, 4, 0))
}

func tgtMask(s *graph.Scope) *G.Node {
	return s.Constant("tgt_mask", CausalMask(s.Dtype(), tgtIDs, 2, 3, 0))
}

// mha is the paper's attention on the test sizes.
func mha() MultiHeadAttention {
	return NewMultiHeadAttention(sizes.DModel, sizes.Heads, sizes.AttnDropout)
}

func TestLayerGradients(t *testing.T) {
	pre := sizes
	pre.PreNorm = true
	tests := []gradCase{
		{"linear", func(s *graph.Scope) *G.Node { return NewLinear(8, 5).Apply(s, input(s, "x", 3)) }},
		{"embedding", func(s *graph.Scope) *G.Node {
			ids := s.Constant("ids", tensor.New(tensor.WithShape(2, 4), tensor.WithBacking(slices.Clone(srcIDs))))
			return NewEmbedding(10, 8).Apply(s, ids)
		}},
		{"logits", func(s *graph.Scope) *G.Node { return NewEmbedding(10, 8).Logits(s, input(s, "x", 3)) }},
		{"learned positions", func(s *graph.Scope) *G.Node { return Learned{MaxLen: 6, DModel: 8}.Apply(s, input(s, "x", 3), nil) }},
		{"sinusoidal positions", func(s *graph.Scope) *G.Node { return Sinusoidal{DModel: 8}.Apply(s, input(s, "x", 3), nil) }},
		{"self-attention", func(s *graph.Scope) *G.Node {
			x := input(s, "x", 4)
			return mha().Apply(s, x, x, srcMask(s), nil)
		}},
		{"causal self-attention", func(s *graph.Scope) *G.Node {
			x := input(s, "x", 3)
			return mha().Apply(s, x, x, tgtMask(s), nil)
		}},
		{"cross-attention", func(s *graph.Scope) *G.Node {
			return mha().Apply(s, input(s, "y", 3), input(s, "x", 4), srcMask(s), nil)
		}},
		{"feed-forward", func(s *graph.Scope) *G.Node { return NewFeedForward(8, 12).Apply(s, input(s, "x", 3)) }},
		{"layer norm", func(s *graph.Scope) *G.Node { return LayerNorm{DModel: 8, Eps: 1e-5}.Apply(s, input(s, "x", 3)) }},
		{"rms norm", func(s *graph.Scope) *G.Node { return RMSNorm{DModel: 8, Eps: 1e-6}.Apply(s, input(s, "x", 3)) }},
		{"encoder layer, post-norm", func(s *graph.Scope) *G.Node {
			return Layer{Sizes: sizes}.Apply(s, input(s, "x", 4), srcMask(s), nil, nil, nil)
		}},
		{"encoder layer, pre-norm, rms", func(s *graph.Scope) *G.Node {
			return Layer{Sizes: pre, Norm: RMSNorm{DModel: 8, Eps: 1e-6}}.Apply(s, input(s, "x", 4), srcMask(s), nil, nil, nil)
		}},
		{"decoder layer, post-norm", func(s *graph.Scope) *G.Node {
			return Layer{Sizes: sizes, Cross: true}.Apply(s, input(s, "y", 3), tgtMask(s), input(s, "x", 4), srcMask(s), nil)
		}},
		{"decoder stack, pre-norm", func(s *graph.Scope) *G.Node {
			d := Stack{Layer: Layer{Sizes: pre, Cross: true}, N: 2, FinalNorm: LayerNorm{DModel: 8, Eps: 1e-5}}
			return d.Apply(s, input(s, "y", 3), tgtMask(s), input(s, "x", 4), srcMask(s), nil)
		}},
		{"encoder stack", func(s *graph.Scope) *G.Node {
			e := Stack{Layer: Layer{Sizes: sizes}, N: 2}
			return e.Apply(s, input(s, "x", 4), srcMask(s), nil, nil, nil)
		}},
	}
	gradChecks(t, tests)
}

func TestParameterNames(t *testing.T) {
	params, _ := graph.NewParams(tensor.Float32, rand.New(rand.NewPCG(1, 1)))
	s := graph.NewScope(params)
	Layer{Sizes: sizes, Cross: true}.Apply(s.In("decoder", "layers", 0), input(s, "y", 3), tgtMask(s), input(s, "x", 4), srcMask(s), nil)
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	want := []string{"y", "x"}
	for _, sub := range []string{"self_attn", "norm1", "cross_attn", "norm2", "feed_forward", "norm3"} {
		p := "decoder.layers.0." + sub
		switch sub {
		case "self_attn", "cross_attn":
			for _, proj := range []string{"q_proj", "k_proj", "v_proj", "out_proj"} {
				want = append(want, p+"."+proj+".weight", p+"."+proj+".bias")
			}
		case "feed_forward":
			want = append(want, p+".linear1.weight", p+".linear1.bias", p+".linear2.weight", p+".linear2.bias")
		default:
			want = append(want, p+".weight", p+".bias")
		}
	}
	if got := params.Names(); !slices.Equal(got, want) {
		t.Fatalf("parameters\n got %v\nwant %v", got, want)
	}
}

// gradCase is a layer to gradient-check: build adds it to a scope.
type gradCase struct {
	name  string
	build func(s *graph.Scope) *G.Node
}

// gradChecks checks each case's gradients in float64 and float32, without
// dropout and with it.
func gradChecks(t *testing.T, tests []gradCase) {
	t.Helper()
	for _, tc := range tests {
		for _, train := range []bool{false, true} {
			name := tc.name
			if train {
				name += ", dropout"
			}
			t.Run(name, func(t *testing.T) {
				c := graph.GradCheck{Build: tc.build, Train: train, Seed: 5, MaxPerParam: 16, Float32: true}
				if err := c.Run(); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}
