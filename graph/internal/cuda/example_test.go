package cuda_test

import (
	"fmt"

	"github.com/pkg/errors"
	"github.com/transformer-go/transformer/graph/internal/cuda"
)

// A program chooses its device from -device before any work; auto falls
// back to the CPU and says why (here with an open that fails as on a
// machine without a GPU; a program passes cuda.Open).
func ExampleChoose() {
	var kind cuda.Kind
	if err := kind.Set("auto"); err != nil {
		fmt.Println(err)
		return
	}
	noGPU := func() (*cuda.CUDA, error) { return nil, errors.New("cuInit: CUDA_ERROR_NO_DEVICE (100)") }
	dev, fallback, err := cuda.Choose(kind, noGPU)
	fmt.Println(dev == nil, err)
	fmt.Println(fallback)
	// Output:
	// true <nil>
	// device auto: running on the CPU: cuInit: CUDA_ERROR_NO_DEVICE (100)
}
