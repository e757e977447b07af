#!/bin/sh
# ptx.sh DIR [OUTDIR]: compile each DIR/*.cu, a device module's CUDA C, to
# PTX for compute capability 8.0 (Ampere and later, Hopper included) into
# OUTDIR/NAME.ptx (OUTDIR: DIR), with this folder's include/ (common.cuh) on
# the include path. A module's go generate runs it on its kernels/ folder;
# the tests run it into a temporary folder and compare.
set -eu
dir=${1:?usage: ptx.sh DIR [OUTDIR]}
out=${2:-$dir}
inc=$(dirname "$0")/include
for f in "$dir"/*.cu; do
	nvcc -ptx -arch=compute_80 -I "$inc" -o "$out/$(basename "$f" .cu).ptx" "$f"
done
