package graph

import "embed"

//go:generate sh cuda/ptx.sh kernels

// kernelFiles are the CUDA C of this package's device kernels
// (kernels/*.cu) and the PTX nvcc makes of each (cuda/ptx.sh).
//
//go:embed kernels/*.cu kernels/*.ptx
var kernelFiles embed.FS

// deviceKernels is this package's device module, "graph".
var deviceKernels = MustRegisterDeviceModule("graph", kernelFiles, "kernels")

// The handles of the kernels the runtime itself launches and of those
// several ops share; an op's own are taken where it is defined.
var (
	addF32           = deviceKernels.Kernel("add_f32")
	scaleF32         = deviceKernels.Kernel("scale_f32")
	fillF32          = deviceKernels.Kernel("fill_f32")
	toBF16           = deviceKernels.Kernel("to_bf16")
	permuteF32       = deviceKernels.Kernel("permute_f32")
	bcastBwdF32      = deviceKernels.Kernel("bcast_bwd_f32")
	gatherRowsF32    = deviceKernels.Kernel("gather_rows_f32")
	adamMultiF32     = deviceKernels.Kernel("adam_multi_f32")
	axpyMultiF32     = deviceKernels.Kernel("axpy_multi_f32")
	toBF16Multi      = deviceKernels.Kernel("to_bf16_multi")
	sumSquaresMulti  = deviceKernels.Kernel("sum_squares_multi_f32")
	sumF32           = deviceKernels.Kernel("sum_f32")
	placeAxisF32     = deviceKernels.Kernel("place_axis_f32")
	sliceAxisF32     = deviceKernels.Kernel("slice_axis_f32")
	reluFwdF32       = deviceKernels.Kernel("relu_fwd_f32")
	layernormFwdF32  = deviceKernels.Kernel("layernorm_fwd_f32")
	layernormBwdF32  = deviceKernels.Kernel("layernorm_bwd_f32")
	layernormBwdPF32 = deviceKernels.Kernel("layernorm_bwd_params_f32")
)
