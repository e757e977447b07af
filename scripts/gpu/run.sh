#!/usr/bin/env bash
# run.sh: on a GPU machine, run the CUDA device's tests that build.sh put in
# this folder: every kernel and cuBLAS product on the GPU against the same
# float64 references as on the simulated device (1e-4 relative, TF32 off),
# and the checks of bad calls; every op's programs, forward and gradients,
# on the GPU against the CPU (graph's TestDevice*, 1e-4 relative); then the
# benchmarks BenchmarkCUDA*. The
# output goes to cuda.log too. It exits 2 if the CUDA device could not be
# opened (the log says why).
set -euo pipefail
cd "$(dirname "$0")"
# wheel_cublas prints the folder of cuBLAS in PyTorch's nvidia wheel, if any.
wheel_cublas() {
	python3 - <<'PY'
import glob, os, site
for d in site.getsitepackages():
    for p in sorted(glob.glob(os.path.join(d, "nvidia", "**", "libcublas.so.1[123]"), recursive=True)):
        print(os.path.dirname(p))
        raise SystemExit
PY
}
# cuBLAS: where the loader finds it, else the toolkit's folder, else
# PyTorch's wheel.
if ! ldconfig -p | grep -q 'libcublas\.so\.1[123] '; then
	libdir=$(ls -d /usr/local/cuda/lib64 2>/dev/null || wheel_cublas 2>/dev/null || true)
	export LD_LIBRARY_PATH=${libdir}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	echo "run.sh: cuBLAS from ${libdir:-nowhere found}"
fi
export NVIDIA_TF32_OVERRIDE=0 # no TF32, whatever the environment says
nvidia-smi -L || true
status=0
./cuda.test -test.v -test.count=1 -test.run '^(TestOpenOnGPU|TestKernels|TestGemm|TestBadCalls)$' 2>&1 | tee cuda.log || status=$?
if ! grep -q -- '--- PASS: TestOpenOnGPU' cuda.log; then
	echo "run.sh: the CUDA device was not opened, so not tested (see TestOpenOnGPU above)"
	exit 2
fi
# Programs: every op of graph, forward and gradients, against the CPU.
./graph.test -test.v -test.count=1 -test.run '^(TestDeviceForward|TestDeviceGradients|TestDeviceDropout)$' 2>&1 | tee -a cuda.log || status=$?
# Speed: cuBLAS products (TFLOP/s) and the row softmax (GB/s).
./cuda.test -test.run '^$' -test.bench 'CUDA' -test.benchtime 20x 2>&1 | tee -a cuda.log || status=$?
exit "$status"
