#!/usr/bin/env bash
# run.sh BIN LOGS: on a GPU machine, from the binaries build.sh packed
# (unpacked into BIN), check the CUDA backend on the GPU, then measure it,
# writing every step's log into LOGS; each step has a timeout of its own,
# their sum 8 minutes, so the whole run ends within 8 minutes and what ran
# before a step that hangs keeps its log. Correctness first:
#   1. cuda.log     every kernel and cuBLAS product against float64
#                   references (1e-4, TF32 off), and bad calls refused
#   2. graph.log    every op's programs, forward and gradients, against the
#                   CPU (TestDevice*, 1e-4)
#   3. trainer.log  twenty steps of base against the CPU; twenty steps of
#                   tiny replayed as CUDA graphs bit for bit the steps run op
#                   by op
#   4. decode.log   greedy and beam decoding give the CPU's tokens
# then speed:
#   5. bench-{float32,bf16}-{64,128}.log  cmd/bench beside PyTorch eager on
#                   the same GPU (PYTHON, default python3, with a CUDA
#                   PyTorch), base V8000: training and forward at 64x64 and
#                   128x128, greedy decoding at batch 1 and 64, beam 4 at
#                   batch 1; bf16 against torch.autocast("cuda")
#   6. multi30k.log the README's Multi30k command on the GPU (BIN/multi30k),
#                   and its first 200 updates on the CPU: the validation
#                   losses at update 200
#   7. kernels.log  BenchmarkCUDA*: products in TFLOP/s, softmax and norms
#                   in GB/s against a device-to-device copy
# It exits 2 if the GPU could not be opened (cuda.log says why), else 1 if
# any step failed.
set -uo pipefail
bin=$(cd "${1:?usage: run.sh BIN LOGS}" && pwd)
logs=$(mkdir -p "${2:?usage: run.sh BIN LOGS}" && cd "$2" && pwd)
cd "$bin"
# wheel_cublas prints the folder of cuBLAS in PyTorch's nvidia wheel, if any.
wheel_cublas() {
	${PYTHON:-python3} - <<'PY'
import glob, os, site
for d in site.getsitepackages():
    for p in sorted(glob.glob(os.path.join(d, "nvidia", "**", "libcublas.so.1[123]"), recursive=True)):
        print(os.path.dirname(p))
        raise SystemExit
PY
}
if ! ldconfig -p | grep -q 'libcublas\.so\.1[123] '; then
	libdir=$(ls -d /usr/local/cuda/lib64 2>/dev/null || wheel_cublas 2>/dev/null || true)
	export LD_LIBRARY_PATH=${libdir}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	echo "run.sh: cuBLAS from ${libdir:-nowhere found}" | tee "$logs/env.log"
fi
export NVIDIA_TF32_OVERRIDE=0 # no TF32, whatever the environment says
nvidia-smi >>"$logs/env.log" 2>&1 || true
status=0
# step NAME SECONDS COMMAND...: run COMMAND under timeout into LOGS/NAME.log.
step() {
	local name=$1 secs=$2
	shift 2
	echo "== $name (at most ${secs}s): $*" | tee -a "$logs/run.log"
	local start=$SECONDS
	timeout --kill-after=5 "$secs" "$@" >"$logs/$name.log" 2>&1
	local rc=$?
	echo "== $name: exit $rc after $((SECONDS - start))s" | tee -a "$logs/run.log"
	[ "$rc" -eq 0 ] || status=1
	return "$rc"
}
step cuda 35 ./cuda.test -test.v -test.count=1 -test.run '^(TestOpenOnGPU|TestKernels|TestGemm|TestBadCalls|TestLaunchShapes)$'
if ! grep -q -- '--- PASS: TestOpenOnGPU' "$logs/cuda.log"; then
	echo "run.sh: the CUDA device was not opened (see cuda.log)" | tee -a "$logs/run.log"
	exit 2
fi
step graph 30 ./graph.test -test.v -test.count=1 -test.run '^TestDevice'
step trainer 45 ./trainer.test -test.v -test.count=1 -test.run '^(TestGPUTrainingBase|TestGPUReplayIsOpByOp)$'
step decode 25 ./decode.test -test.v -test.count=1 -test.run '^TestGPUDecoding$'
python=${PYTHON:-python3}
for prec in float32 bf16; do
	step "bench-$prec-64" 45 ./bench -device cuda -precision "$prec" -torch -python "$python" -presets base -vocabs 8000 \
		-shape 64x64 -decode-preset base -decode-batches 1,64 -rounds 2
	step "bench-$prec-128" 25 ./bench -device cuda -precision "$prec" -torch -python "$python" -presets base -vocabs 8000 \
		-shape 128x128 -decode=false -rounds 2
done
if [ -d multi30k ]; then
	m30k=(-task files -data multi30k -preset small -max-tokens 2048 -warmup 1000 -eval-every 200 -precision bf16
		-label-smoothing 0.1)
	step multi30k 150 ./train -device cuda "${m30k[@]}" -epochs 16 -bleu-every 5 -average 5 -out "$logs/m30k"
	# The same run's first 200 updates on this machine's CPU: the validation
	# loss at update 200 must agree within 1% (the schedule does not depend
	# on the run's length).
	step multi30k-cpu 40 ./train -device cpu "${m30k[@]}" -steps 200 -out "$logs/m30k-cpu"
	${PYTHON:-python3} - "$logs" <<'PY' | tee -a "$logs/multi30k.log"
import json, sys
def at200(path):
    for line in open(path):
        m = json.loads(line)
        if m.get("step") == 200 and "val_loss" in m:
            return m["val_loss"]
gpu, cpu = at200(sys.argv[1] + "/m30k/metrics.jsonl"), at200(sys.argv[1] + "/m30k-cpu/metrics.jsonl")
print(f"validation loss at update 200: {gpu} on the GPU, {cpu} on the CPU, {abs(gpu - cpu) / cpu:.2%} apart")
PY
fi
step kernels 15 ./cuda.test -test.run '^$' -test.bench 'CUDA' -test.benchtime 20x
exit "$status"
