package layers

import (
	"math/rand/v2"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
)

// oneBias is a user's PositionBias of the wrong shape: one number for every
// head, query and key.
type oneBias struct{}

func (oneBias) Bias(s *graph.Scope, _, _, _ int, _ *Slot, _ float64) *G.Node {
	return s.Constant("one_bias", graph.FromFloat64s(s.Dtype(), []float64{1}, 1, 1, 1, 1))
}

func (oneBias) PlacesPositions() bool { return false }

func TestPositionBiasOfTheWrongShapeIsNamed(t *testing.T) {
	params, err := graph.NewParams(tensor.Float64, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	s := graph.NewScope(params)
	x := input(s, "x", 3)
	a := gqa(4, false)
	a.Bias = oneBias{}
	a.Apply(s, x, x, tgtMask(s), nil)
	err = s.Err()
	if err == nil || !strings.Contains(err.Error(), "PositionBias layers.oneBias gave a bias of shape (1, 1, 1, 1), want (1, 4, 3, 3)") {
		t.Fatalf("a bias of the wrong shape: %v, want an error naming the bias and the shape it must have", err)
	}
}

// wideFFN is a user's feed-forward sublayer that forgets to project back to
// the model's width.
type wideFFN struct{}

func (wideFFN) Apply(s *graph.Scope, x *G.Node) *G.Node {
	return Linear{In: sizes.DModel, Out: 2 * sizes.DModel}.Apply(s.In("linear1"), x)
}

func TestSublayerOfTheWrongShapeIsNamed(t *testing.T) {
	params, err := graph.NewParams(tensor.Float64, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	s := graph.NewScope(params)
	Layer{Sizes: sizes, FFN: wideFFN{}}.Apply(s.In("encoder", "layers", 0), input(s, "x", 4), srcMask(s), nil, nil, nil)
	err = s.Err()
	if err == nil || !strings.Contains(err.Error(), "feed_forward: the sublayer layers.wideFFN mapped its input (2, 4, 8) to (2, 4, 16)") {
		t.Fatalf("a feed-forward sublayer of the wrong width: %v, want an error naming it and the shapes", err)
	}
}
