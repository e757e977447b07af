package safetensors_test

import (
	"bytes"
	"fmt"
	"log"

	"github.com/transformer-go/transformer/graph/safetensors"
	"gorgonia.org/tensor"
)

func Example() {
	weight := tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float32{1, 2, 3, 4}))
	w, err := safetensors.FromDense("encoder.weight", weight)
	if err != nil {
		log.Fatal(err)
	}
	bias := safetensors.Tensor{Name: "encoder.bias", DType: safetensors.F16, Shape: []int{2}, Data: []byte{0x00, 0x38, 0x00, 0xbc}}

	// Write would store the same bytes in a file atomically.
	var buf bytes.Buffer
	if err := safetensors.Encode(&buf, []safetensors.Tensor{w, bias}, map[string]string{"format": "pt"}); err != nil {
		log.Fatal(err)
	}

	f, err := safetensors.Decode(buf.Bytes())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(f.Names(), f.Metadata)
	for _, name := range f.Names() {
		d, err := f.Dense(name, tensor.Float64)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(name, f.Tensors[name].DType, d.Shape(), d.Data())
	}
	// Output:
	// [encoder.bias encoder.weight] map[format:pt]
	// encoder.bias F16 (2) [0.5 -1]
	// encoder.weight F32 (2, 2) [1 2 3 4]
}
