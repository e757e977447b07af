#!/usr/bin/env bash
# build.sh [OUT]: build the test binaries of the CUDA device, graph (every
# op's programs), trainer (training base) and model/decode (decoding), and the
# commands bench (speed beside PyTorch), train and translate, pure Go (CGO_ENABLED=0, the PTX
# embedded), into OUT (default gpu-tests), with run.sh beside them, for a GPU
# machine that has no Go. Copy OUT there and run: bash OUT/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-gpu-tests}
mkdir -p "$out"
CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go test -c -o "$out/cuda.test" ./graph/internal/cuda
for pkg in graph trainer model/decode; do
	CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go test -c -o "$out/$(basename "$pkg").test" "./$pkg"
done
for cmd in bench train translate; do
	CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -o "$out/$cmd" "./cmd/$cmd"
done
cp scripts/gpu/run.sh "$out/run.sh"
echo "built $out/{cuda,graph,trainer,decode}.test and $out/{bench,train,translate}; on the GPU machine: bash $out/run.sh"
