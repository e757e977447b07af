#!/usr/bin/env bash
# notebooks/run.sh: execute the Go notebooks headless (after notebooks/setup.sh).
#
#   notebooks/run.sh                       every notebook under notebooks/; executed
#                                          copies go to a new temporary folder, the
#                                          checkout is left as it is (for CI)
#   notebooks/run.sh --inplace             write the outputs back into the notebooks
#                                          that passed (to commit them with outputs)
#   notebooks/run.sh --out DIR             executed copies and kernel logs under DIR
#   notebooks/run.sh --timeout 300 A.ipynb only A.ipynb, 300 s per cell (default 600,
#                                          or $NOTEBOOK_CELL_TIMEOUT)
#
# Notebooks run one at a time, each in a fresh kernel started in its own folder.
# Exit status 1 if any cell of any notebook failed or timed out; the report names
# the notebook and the cell, and prints the end of the kernel's log (go build
# output of import cells). Last line: "N passed, N failed".
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
PY=/usr/bin/python3
STATE_DIR=${NOTEBOOKS_STATE_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/transformer-notebooks}

die() {
	printf 'run.sh: %s\n' "$*" >&2
	exit 1
}

case "${1:-}" in -h | --help)
	sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
	exit 0
	;;
esac

if [ ! -x "$PY" ] || ! "$PY" -c 'import nbclient, nbformat' 2>/dev/null; then
	die "Jupyter is not installed for $PY: run notebooks/setup.sh first"
fi
[ -x "$STATE_DIR/bin/gophernotes" ] || die "no gophernotes kernel in $STATE_DIR: run notebooks/setup.sh first"
spec_binary=$("$PY" -c 'from jupyter_client.kernelspec import KernelSpecManager as K; print(K().get_kernel_spec("gophernotes").argv[0])' 2>/dev/null) ||
	die "no Jupyter kernelspec \"gophernotes\": run notebooks/setup.sh first"
stamp=$(cat "$HERE/go.mod" "$HERE/go.sum" "$ROOT/go.mod" | sha256sum | cut -d' ' -f1)
if [ "$stamp" != "$(cat "$STATE_DIR/modules.stamp" 2>/dev/null)" ] || [ "$spec_binary" != "$STATE_DIR/bin/gophernotes" ] ||
	[ -n "$(find "$STATE_DIR/goproxy" -xtype l -print -quit 2>/dev/null)" ]; then
	echo "run.sh: go.mod, notebooks/go.mod, the module cache or the kernelspec changed since notebooks/setup.sh last ran; running it again"
	"$HERE/setup.sh" --no-apt >&2 || die "notebooks/setup.sh --no-apt failed"
fi

export GOTOOLCHAIN=local
export PYDEVD_DISABLE_FILE_VALIDATION=1 # quiets a debugger warning of ipykernel's Python
exec "$PY" "$HERE/run.py" "$@"
