#!/usr/bin/env bash
# build.sh [OUT]: build, here, what scripts/gpu/run.sh runs on a GPU machine
# that has no Go: the test binaries of graph/cuda (kernels and products),
# graph (every op's programs), trainer (training and replays) and
# model/decode (decoding), and the commands bench, train and translate, pure
# Go (CGO_ENABLED=0, stripped, the PTX embedded); with Multi30k from
# ../shared when it is there. They are packed into OUT/pack.tar.xz (OUT:
# gpu-pack, which git ignores), about 40 MB, for the device's carry. There:
#   python3 -c "import tarfile; tarfile.open('gpu-pack/pack.tar.xz').extractall('gpu-bin')"
#   bash scripts/gpu/run.sh gpu-bin "$OUT"
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-gpu-pack}
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
export CGO_ENABLED=0 GOOS=linux GOARCH=amd64
for pkg in graph/cuda graph trainer model/decode; do
	go test -c -ldflags='-s -w' -o "$bin/$(basename "$pkg").test" "./$pkg"
done
for cmd in bench train translate; do
	go build -ldflags='-s -w' -o "$bin/$cmd" "./cmd/$cmd"
done
if [ -d ../shared/data/multi30k ]; then
	cp -r ../shared/data/multi30k "$bin/multi30k"
fi
mkdir -p "$out"
tar -C "$bin" -cJf "$out/pack.tar.xz" .
ls -l "$out/pack.tar.xz"
