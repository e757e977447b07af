// Package cuda is graph's CUDA backend: programs of a graph.Runtime run on
// an NVIDIA GPU through it, or on the CPU in a simulated device that runs
// the same CUDA source, or on a recording device that runs nothing and
// counts what a GPU would be asked. Importing it registers the GPU as
// graph.DeviceCUDA (-device cuda in the commands), as database/sql drivers
// register themselves.
//
// The kernels are not here: each package that defines ops ships its own, as
// a graph.DeviceModule of CUDA C and the PTX nvcc makes of it for compute
// capability 8.0 (graph's own in graph/kernels, layers/ops's in
// layers/ops/kernels; ptx.sh makes the PTX, run by go generate). Their
// sources include include/common.cuh, the launch shapes and reductions this
// package's devices give every kernel. The CUDA device (Open) loads
// libcuda.so.1 and cuBLAS at run time with github.com/ebitengine/purego, so
// the build stays pure Go: no cgo, no build tag; it loads every registered
// module's PTX, runs its work on a stream of its own, and records work as
// CUDA graphs (stream capture) that programs replay. The simulated device
// (OpenSim) builds each module's .cu files for the host with g++ and a shim
// (sim.h) and loads them the same way, so that CI checks every kernel and
// program without a GPU. The recording device (NewRecorder) makes every
// check and counts every call. See docs/cuda.md.
package cuda
