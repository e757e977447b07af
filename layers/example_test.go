package layers_test

import (
	"fmt"
	"log"
	"math/rand/v2"

	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/layers"
)

// An encoder layer with the feed-forward network swapped: the sublayers
// left nil are the paper's.
func ExampleLayer() {
	params, err := graph.NewParams(tensor.Float32, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		log.Fatal(err)
	}
	s := graph.NewScope(params)
	x := s.Input("x", tensor.Float32, 2, 5, 16) // [batch, len, dModel]
	z := layers.Sizes{DModel: 16, Heads: 4, DFF: 32, Eps: 1e-5}
	l := layers.Layer{Sizes: z, FFN: layers.Linear{In: 16, Out: 16}}
	y := l.Apply(s.In("layer"), x, nil, nil, nil, nil)
	fmt.Println(y.Shape(), params.Names()[8:])
	// Output: (2, 5, 16) [layer.norm1.weight layer.norm1.bias layer.feed_forward.weight layer.feed_forward.bias layer.norm2.weight layer.norm2.bias]
}

// A decoder of two pre-norm layers: Stack.Apply runs the layer in scopes
// layers.0, layers.1, … and adds the final norm.
func ExampleStack_Apply() {
	params, err := graph.NewParams(tensor.Float32, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		log.Fatal(err)
	}
	s := graph.NewScope(params)
	y := s.Input("y", tensor.Float32, 2, 5, 16)      // [batch, lenT, dModel]
	memory := s.Input("x", tensor.Float32, 2, 7, 16) // the encoder's output [batch, lenS, dModel]
	norm := layers.RMSNorm{DModel: 16, Eps: 1e-6}
	z := layers.Sizes{DModel: 16, Heads: 4, DFF: 32, PreNorm: true}
	st := layers.Stack{Layer: layers.Layer{Sizes: z, Cross: true, Norm: norm}, N: 2, FinalNorm: norm}
	out := st.Apply(s.In("decoder"), y, nil, memory, nil, nil)
	fmt.Println(out.Shape(), len(params.Names()), params.Names()[len(params.Names())-1])
	// Output: (2, 5, 16) 47 decoder.norm.weight
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
	l, err := reg.Layer(z, layers.Variants{Attention: "multi-head", FFN: "linear", Norm: "rms"}, false)
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
