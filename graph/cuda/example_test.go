package cuda_test

import (
	"embed"
	"fmt"
	"log"
	"math/rand/v2"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	"github.com/transformer-go/transformer/graph/cuda"
)

// squareFiles are a package's device kernels: CUDA C and the PTX that
// `sh graph/cuda/ptx.sh testdata/square` makes of it (go generate).
//
//go:embed testdata/square/*.cu testdata/square/*.ptx
var squareFiles embed.FS

// squareKernels is the package's device module, registered once.
var squareKernels = graph.MustRegisterDeviceModule("example.com/square", squareFiles, "testdata/square")

// The handles of its kernels, taken once.
var (
	squareFwd = squareKernels.Kernel("square_fwd_f32")
	squareBwd = squareKernels.Kernel("square_bwd_f32")
)

// square is an op of one's own with device kernels: y = x², dx = 2·x·dy.
func square(s *graph.Scope, x *G.Node) *G.Node {
	return s.Apply(graph.Op{
		Name:  "square",
		Arity: 1,
		Shape: graph.SameShape,
		F32: graph.Kernels[float32]{
			Forward: func(y graph.Operand[float32], x []graph.Operand[float32]) error {
				for i, v := range x[0].Data {
					y.Data[i] = v * v
				}
				return nil
			},
			Backward: func(_ int, dx graph.Operand[float32], x []graph.Operand[float32], _, dy graph.Operand[float32]) error {
				for i, v := range x[0].Data {
					dx.Data[i] = 2 * v * dy.Data[i]
				}
				return nil
			},
		},
		F64: graph.Kernels[float64]{Forward: func(y graph.Operand[float64], x []graph.Operand[float64]) error {
			for i, v := range x[0].Data {
				y.Data[i] = v * v
			}
			return nil
		}},
		Device: graph.DeviceKernels{
			Forward: func(d *graph.DeviceCall, y graph.DeviceOperand, x []graph.DeviceOperand) error {
				return d.Launch(squareFwd.Elems(y.Len()).Ptr(y.Ptr).Ptr(x[0].Ptr).Int(y.Len()))
			},
			Backward: func(d *graph.DeviceCall, _ int, dx graph.DeviceOperand, x []graph.DeviceOperand, _, dy graph.DeviceOperand) error {
				return d.Launch(squareBwd.Elems(dx.Len()).Ptr(dx.Ptr).Ptr(x[0].Ptr).Ptr(dy.Ptr).Int(dx.Len()))
			},
		},
		Diff: []bool{true},
		Save: []int{0},
	}, x)
}

// A package's own op with device kernels: its CUDA C and PTX registered as
// a device module, its kernels launched by handle. The same program runs on
// the CPU and on a recording device, which checks every launch against the
// kernels' source and counts it (on a GPU, cuda.Open; in tests, the
// simulated device, cuda.OpenSim, runs the same source).
func Example_deviceModule() {
	rt, rec, err := cuda.NewRecordingRuntime(graph.Float32)
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close()
	for _, on := range []*graph.Runtime{graph.CPU(), rt} {
		params, err := graph.NewParams(tensor.Float32, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			log.Fatal(err)
		}
		s := graph.NewScope(params)
		x := s.Input("x", tensor.Float32, 3)
		p, err := graph.Compile(on, s, nil, map[string]*G.Node{"y": square(s, x)})
		if err != nil {
			log.Fatal(err)
		}
		if err := p.Set("x", []float32{1, 2, 3}); err != nil {
			log.Fatal(err)
		}
		if err := p.Run(); err != nil {
			log.Fatal(err)
		}
		fmt.Println(on.Device(), p.Output("y").Data())
		_ = p.Close()
	}
	fmt.Println("launches of square_fwd_f32:", rec.Counts().ByKernel["example.com/square.square_fwd_f32"])
	// Output:
	// cpu [1 4 9]
	// cuda [0 0 0]
	// launches of square_fwd_f32: 1
}
