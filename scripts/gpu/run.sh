#!/usr/bin/env bash
# run.sh: on a GPU machine, run the CUDA device's tests that build.sh put in
# this folder: every kernel and cuBLAS product on the GPU against the same
# float64 references as on the simulated device (1e-4 relative, TF32 off),
# and the checks of bad calls; every op's programs, forward and gradients,
# on the GPU against the CPU (graph's TestDevice*, 1e-4 relative); training
# and decoding against the CPU; cmd/train and cmd/translate with -device
# cuda; then the benchmarks BenchmarkCUDA* and
# cmd/bench beside PyTorch. The
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
# Twenty training steps of base on the GPU against the CPU (1e-3 relative
# L2), and greedy and beam decoding against the CPU's tokens.
./trainer.test -test.v -test.count=1 -test.run '^TestGPUTrainingBase$' 2>&1 | tee -a cuda.log || status=$?
./decode.test -test.v -test.count=1 -test.run '^TestGPUDecoding$' 2>&1 | tee -a cuda.log || status=$?
# The commands: base on the built-in copy task, 20 updates on the GPU and on
# the CPU (their metrics.jsonl lines should agree), then the GPU's model
# translates on the GPU.
for dev in cuda cpu; do
	./train -device "$dev" -preset base -steps 20 -eval-every 10 -out "run-$dev" 2>&1 | tee -a cuda.log || status=$?
done
tail -n 1 run-cuda/metrics.jsonl run-cpu/metrics.jsonl | tee -a cuda.log || status=$?
echo "4 5 6 7 8" | ./translate -device cuda -model run-cuda -checkpoint final 2>&1 | tee -a cuda.log || status=$?
# Speed: cuBLAS products (TFLOP/s) and the row softmax (GB/s).
./cuda.test -test.run '^$' -test.bench 'CUDA' -test.benchtime 20x 2>&1 | tee -a cuda.log || status=$?
# Speed beside PyTorch eager on the same GPU ($PYTHON, default python3, with
# a CUDA PyTorch): base's training step and forward pass at 64x64 and
# 128x128, greedy decoding at batch 1 and 64, in float32 and in bf16
# (PyTorch under torch.autocast).
python=${PYTHON:-python3}
for prec in float32 bf16; do
	./bench -device cuda -precision "$prec" -torch -python "$python" -presets base -vocabs 8000 -shape 64x64 \
		-decode-preset base -decode-batches 1,64 -rounds 3 2>&1 | tee -a cuda.log || status=$?
	./bench -device cuda -precision "$prec" -torch -python "$python" -presets base -vocabs 8000 -shape 128x128 \
		-decode=false -rounds 3 2>&1 | tee -a cuda.log || status=$?
done
exit "$status"
