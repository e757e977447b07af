#!/bin/sh
# gen.sh OUTDIR: compile each kernels/*.cu to PTX for compute capability 8.0
# (Ampere and later, Hopper included) into OUTDIR/NAME.ptx. go generate runs
# it into kernels/; the tests run it into a temporary folder and compare.
set -eu
out=${1:?usage: gen.sh OUTDIR}
dir=$(dirname "$0")
for f in "$dir"/*.cu; do
	nvcc -ptx -arch=compute_80 -o "$out/$(basename "$f" .cu).ptx" "$f"
done
