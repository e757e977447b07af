package layers_test

import (
	"fmt"
	"log"
	"math/rand/v2"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/layers"
)

// An encoder layer with the feed-forward network swapped: the sublayers
// left nil are the paper's.
func ExampleEncoderLayer() {
	params, err := graph.NewParams(tensor.Float32, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		log.Fatal(err)
	}
	s := graph.NewScope(params)
	x := s.Input("x", tensor.Float32, 2, 5, 16) // [batch, len, dModel]
	z := layers.Sizes{DModel: 16, Heads: 4, DFF: 32, Eps: 1e-5}
	l := layers.EncoderLayer{Sizes: z, FFN: layers.Linear{In: 16, Out: 16}}
	y := l.Apply(s.In("layer"), x, nil)
	fmt.Println(y.Shape(), params.Names()[8:])
	// Output: (2, 5, 16) [layer.norm1.weight layer.norm1.bias layer.feed_forward.weight layer.feed_forward.bias layer.norm2.weight layer.norm2.bias]
}

// A stack of layers of one's own: Stack.Apply runs the layer in scopes
// layers.0, layers.1, … and adds the final norm.
func ExampleStack_Apply() {
	params, err := graph.NewParams(tensor.Float32, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		log.Fatal(err)
	}
	s := graph.NewScope(params)
	x := s.Input("x", tensor.Float32, 2, 5, 16)
	st := layers.Stack{N: 2, FinalNorm: layers.RMSNorm{DModel: 16, Eps: 1e-6}}
	y := st.Apply(s.In("mixer"), x, func(s *graph.Scope, x *G.Node) *G.Node {
		return s.Add(x, s.ReLU(layers.NewLinear(16, 16).Apply(s.In("mix"), x))) // x + max(0, x·Wᵀ + b)
	})
	fmt.Println(y.Shape(), params.Names())
	// Output: (2, 5, 16) [mixer.layers.0.mix.weight mixer.layers.0.mix.bias mixer.layers.1.mix.weight mixer.layers.1.mix.bias mixer.norm.weight]
}

// Registering a variant by name, so that configs and checkpoints can name
// it: a layer built from the registry.
func ExampleRegistry() {
	reg := layers.NewRegistry()
	err := reg.FFN.Register("linear", func(z layers.Sizes) layers.FFN { return layers.NewLinear(z.DModel, z.DModel) })
	if err != nil {
		log.Fatal(err)
	}
	z := layers.Sizes{DModel: 16, Heads: 4, DFF: 32, Eps: 1e-6, PreNorm: true}
	l, err := reg.EncoderLayer(z, layers.Variants{Attention: "multi-head", FFN: "linear", Norm: "rms"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%T %T\n", l.FFN, l.Norm)
	fmt.Println(reg.FFN.Names())
	_, err = layers.NewRegistry().FFN.New("linear", z)
	fmt.Println(err)
	// Output:
	// layers.Linear layers.RMSNorm
	// [linear relu swiglu]
	// unknown ffn "linear": registered are relu, swiglu
}
