#!/usr/bin/env bash
# build.sh [OUT]: build the CUDA device's test binary and graph's (the
# programs on a device; pure Go, CGO_ENABLED=0, the PTX embedded) into OUT (default gpu-tests), with run.sh beside it, for
# a GPU machine that has no Go. Copy OUT there and run: bash OUT/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-gpu-tests}
mkdir -p "$out"
CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go test -c -o "$out/cuda.test" ./graph/internal/cuda
CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go test -c -o "$out/graph.test" ./graph
cp scripts/gpu/run.sh "$out/run.sh"
echo "built $out/cuda.test and $out/graph.test; on the GPU machine: bash $out/run.sh"
