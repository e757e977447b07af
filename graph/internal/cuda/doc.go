// Package cuda runs the project's kernels on an NVIDIA GPU, or on the CPU in
// a simulated device, behind one small interface, Device: memory, copies,
// kernels launched by name with checked arguments, and cuBLAS products.
//
// The kernels are CUDA C in kernels/*.cu, compiled by nvcc to PTX for
// compute capability 8.0 (kernels/gen.sh, run by go generate) and embedded.
// The CUDA device (Open) loads libcuda.so.1 and cuBLAS at run time with
// github.com/ebitengine/purego, so the build stays pure Go: no cgo, no
// build tag. The simulated device (OpenSim) builds the same .cu files for
// the host with g++ and a shim (kernels/sim.h) and loads them the same way,
// so that CI checks every kernel without a GPU. See docs/cuda.md for why
// purego, what is checked where, and how the graph runtime is to call it.
//
// It is internal to graph: the runtime (graph.Runtime) chooses and owns the
// device; commands name it with graph.Device (-device cpu|cuda|auto).
package cuda
