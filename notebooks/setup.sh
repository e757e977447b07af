#!/usr/bin/env bash
# notebooks/setup.sh: make this machine able to run the Go notebooks.
#
#   notebooks/setup.sh                 set up (idempotent: a second run takes seconds)
#   notebooks/setup.sh --no-apt        never call apt-get (fail if Jupyter is missing)
#   notebooks/setup.sh --sync-go-mod   first copy the project's go.mod requirements
#                                      into notebooks/go.mod (then commit it and go.sum)
#   notebooks/setup.sh --with-ui       also install the classic Jupyter Notebook web
#                                      UI (Debian's jupyter-notebook), to open notebooks
#
# Steps (README.md says why each is needed):
#   1. Jupyter (nbclient, nbconvert, ipykernel) from Debian's apt, plus gcc and
#      patch; used through /usr/bin/python3 and /usr/bin/jupyter only.
#   2. The module cache filled with every module of notebooks/go.mod, which
#      must resolve the project's go.mod requirements to the same versions.
#   3. gophernotes v0.7.5, built from the module cache against kernel/go.mod
#      with kernel/x_package.patch applied, into $STATE_DIR/bin. Modules that
#      the kernel links and the notebooks' build list has at a higher version
#      are raised to that version (a plugin must not bring another version of
#      a package the kernel has).
#   4. A file:// module proxy in $STATE_DIR/goproxy offering exactly one
#      version of each module of notebooks/go.mod, so that the `go get`
#      gophernotes runs for each import cell cannot pick another version.
#   5. The kernelspec "gophernotes" (argv: the built binary; env: GODEBUG,
#      GOPROXY, ...) installed for the current user, and a one-cell smoke test.
#
# Environment: NOTEBOOKS_STATE_DIR (default ~/.local/share/transformer-notebooks);
# JUPYTER_DATA_DIR, GOPATH, GOMODCACHE, GOCACHE as usual.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
PY=/usr/bin/python3
JUPYTER=/usr/bin/jupyter
HELPERS="$HERE/kernel/helpers.py"
KERNEL_NAME=gophernotes
GOPHERNOTES=github.com/gopherdata/gophernotes@v0.7.5
STATE_DIR=${NOTEBOOKS_STATE_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/transformer-notebooks}
APT_PACKAGES=(jupyter-nbconvert python3-nbclient jupyter-client jupyter-core python3-nbformat python3-ipykernel)

use_apt=1
sync_go_mod=0
with_ui=0
for arg in "$@"; do
	case "$arg" in
	--no-apt) use_apt=0 ;;
	--sync-go-mod) sync_go_mod=1 ;;
	--with-ui) with_ui=1 ;;
	-h | --help)
		sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
		exit 0
		;;
	*)
		echo "setup.sh: unknown argument: $arg (see --help)" >&2
		exit 2
		;;
	esac
done

step() { printf '\n==> %s   [%ss]\n' "$*" "$(($(date +%s) - start))"; }
info() { printf '    %s\n' "$*"; }
die() {
	printf '\nsetup.sh: FAILED: %s\n' "$*" >&2
	exit 1
}
trap 'printf "\nsetup.sh: FAILED (exit %s) at line %s: %s\n" "$?" "$LINENO" "$BASH_COMMAND" >&2' ERR

export PYDEVD_DISABLE_FILE_VALIDATION=1 # quiets a debugger warning of ipykernel's Python
start=$(date +%s)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# --- 0. Go ------------------------------------------------------------------
step "Go toolchain"
command -v go >/dev/null || die "go is not on PATH"
export GOTOOLCHAIN=local
go_version=$(go env GOVERSION)
need=$(sed -n 's/^go \([0-9.]*\).*/\1/p' "$ROOT/go.mod")
info "$go_version (the project's go.mod asks for go $need), GOROOT $(go env GOROOT)"
if [ "$(printf '%s\n%s\n' "go$need" "$go_version" | sort -V | head -1)" != "go$need" ]; then
	die "$go_version is older than go $need, the project's go.mod directive"
fi
GOMODCACHE=$(go env GOMODCACHE)
# Modules already in the module cache come from there, the others from the
# usual proxy (which refuses version lists for some of these modules).
upstream_proxy=$(go env GOPROXY)
export GOPROXY="file://$GOMODCACHE/cache/download,$upstream_proxy"
# gomacro's pseudo-version is not in the checksum database; its hashes are in
# kernel/go.sum.
export GONOSUMDB=github.com/cosmos72/gomacro
export GOFLAGS="${GOFLAGS:-} -mod=readonly"
export CGO_ENABLED=1 # -buildmode=plugin needs cgo

# --- 1. Jupyter, gcc, patch -------------------------------------------------
step "Jupyter (Debian packages), gcc, patch"
missing=()
if [ ! -x "$PY" ] || ! "$PY" -c 'import nbclient, nbformat, nbconvert, jupyter_client, ipykernel' 2>/dev/null; then
	missing+=("${APT_PACKAGES[@]}")
elif [ ! -x "$JUPYTER" ]; then
	missing+=(jupyter-core)
fi
if [ "$with_ui" = 1 ] && ! "$PY" -c 'import notebook' 2>/dev/null; then
	missing+=(jupyter-notebook)
fi
command -v gcc >/dev/null || missing+=(gcc libc6-dev)
command -v patch >/dev/null || missing+=(patch)
if [ ${#missing[@]} -eq 0 ]; then
	info "already installed"
else
	[ "$use_apt" = 1 ] || die "missing: ${missing[*]} (and --no-apt was given)"
	sudo=()
	if [ "$(id -u)" != 0 ]; then
		command -v sudo >/dev/null || die "missing ${missing[*]}: run as root, or apt-get install them"
		sudo=(sudo)
	fi
	info "apt-get install ${missing[*]}"
	"${sudo[@]}" apt-get update -qq || die "apt-get update failed"
	DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >"$tmp/apt.log" 2>&1 ||
		{ tail -20 "$tmp/apt.log" >&2; die "apt-get install failed"; }
	"$PY" -c 'import nbclient, nbformat, nbconvert, jupyter_client, ipykernel' ||
		die "Jupyter's Python modules still do not import with $PY"
fi
info "$("$PY" -c 'import nbclient, nbconvert, jupyter_client; print("nbclient", nbclient.__version__, "nbconvert", nbconvert.__version__, "jupyter_client", jupyter_client.__version__)')"

# --- 2. notebooks/go.mod and the module cache ------------------------------
step "Notebook modules (notebooks/go.mod) and the module cache"
root_requires() { go mod edit -json "$ROOT/go.mod" | "$PY" "$HELPERS" requires; }
if [ "$sync_go_mod" = 1 ]; then
	info "copying the project's requirements into notebooks/go.mod"
	args=()
	while read -r path version; do args+=("$path@$version"); done < <(root_requires)
	# No `go mod tidy` afterwards: it would drop the requirements that no
	# package of this module imports, which are the point here.
	(cd "$HERE" && GOFLAGS=-mod=mod go get "${args[@]}") || die "updating notebooks/go.mod failed"
fi
(cd "$HERE" && go mod download all) || die "go mod download all (in notebooks/) failed"
(cd "$HERE" && go list -m all) >"$tmp/nb-modules" || die "go list -m all (in notebooks/) failed"
bad=0
while read -r path version; do
	have=$(awk -v p="$path" '$1 == p { print $2 }' "$tmp/nb-modules")
	if [ "$have" != "$version" ]; then
		echo "    MISMATCH $path: the project's go.mod requires $version, notebooks/go.mod resolves ${have:-nothing}" >&2
		bad=1
	fi
done < <(root_requires)
[ "$bad" = 0 ] || die "notebooks/go.mod is out of step with the project's go.mod; run: notebooks/setup.sh --sync-go-mod (then commit notebooks/go.mod and notebooks/go.sum)"
info "$(($(wc -l <"$tmp/nb-modules") - 1)) modules; the project's $(root_requires | wc -l) requirements resolve to the same versions"

# --- 3. gophernotes ---------------------------------------------------------
step "gophernotes kernel binary"
bin="$STATE_DIR/bin/gophernotes"
src_dir=$(cd "$tmp" && GOFLAGS=-mod=mod go mod download -json "$GOPHERNOTES" |
	"$PY" -c 'import json,sys; d=json.load(sys.stdin); sys.exit("go mod download: " + d["Error"]) if d.get("Error") else print(d["Dir"])') ||
	die "could not download $GOPHERNOTES"
src="$tmp/gophernotes"
cp -r "$src_dir" "$src"
chmod -R u+w "$src"
cp "$HERE/kernel/go.mod" "$HERE/kernel/go.sum" "$src/"
(cd "$src" && patch -p1 --forward --batch --dry-run <"$HERE/kernel/x_package.patch" >/dev/null) ||
	die "kernel/x_package.patch does not apply to $GOPHERNOTES"
(cd "$src" && patch -p1 --forward --batch --quiet <"$HERE/kernel/x_package.patch")
(cd "$src" && go list -deps -f '{{with .Module}}{{if not .Main}}{{.Path}} {{.Version}}{{end}}{{end}}' . | sort -u) >"$tmp/kernel-deps" ||
	die "go list (gophernotes' dependencies) failed"
"$PY" "$HELPERS" align "$tmp/kernel-deps" "$tmp/nb-modules" >"$tmp/raise"
if [ -s "$tmp/raise" ]; then
	info "raising, to the notebooks' versions: $(tr '\n' ' ' <"$tmp/raise")"
	mapfile -t raise <"$tmp/raise"
	(cd "$src" && GOFLAGS=-mod=mod go get "${raise[@]}") >"$tmp/raise.log" 2>&1 ||
		{ cat "$tmp/raise.log" >&2; die "go get (aligning the kernel's dependencies) failed"; }
fi
build_stamp=$(cat "$src/go.mod" "$src/go.sum" "$HERE/kernel/x_package.patch" <(echo "$GOPHERNOTES $go_version $(go env GOROOT)") | sha256sum | cut -d' ' -f1)
if [ -x "$bin" ] && [ "$(cat "$bin.stamp" 2>/dev/null)" = "$build_stamp" ]; then
	info "up to date: $bin"
else
	info "building $GOPHERNOTES with kernel/x_package.patch (about a minute on 2 cores)"
	mkdir -p "$STATE_DIR/bin"
	(cd "$src" && go build -o "$bin.new" .) || die "building gophernotes failed"
	mv -f "$bin.new" "$bin"
	echo "$build_stamp" >"$bin.stamp"
	info "built $bin"
fi

# --- 4. The pinned module proxy ----------------------------------------------
step "Pinned module proxy for the kernel"
proxy_dir="$STATE_DIR/goproxy"
(cd "$HERE" && go mod download -json all) >"$tmp/download.json" || die "go mod download -json all failed"
rm -rf "$proxy_dir.new"
"$PY" "$HELPERS" proxy "$tmp/download.json" "$proxy_dir.new"
rm -rf "$proxy_dir"
mv "$proxy_dir.new" "$proxy_dir"
info "$proxy_dir"

# --- 5. Kernelspec -----------------------------------------------------------
step "Kernelspec \"$KERNEL_NAME\""
spec="$tmp/kernelspec/$KERNEL_NAME"
mkdir -p "$spec"
cp "$src/kernel/"logo-*.png "$spec/"
"$PY" "$HELPERS" kernelspec "$spec/kernel.json" "$bin" "$proxy_dir"
"$JUPYTER" kernelspec install --user --replace --name "$KERNEL_NAME" "$spec" >"$tmp/kernelspec.log" 2>&1 ||
	{ cat "$tmp/kernelspec.log" >&2; die "jupyter kernelspec install failed"; }
info "$("$JUPYTER" kernelspec list | awk -v k="$KERNEL_NAME" '$1 == k { print $2 }')/kernel.json -> $bin"

# What this set-up was made from, for run.sh to notice changes.
cat "$HERE/go.mod" "$HERE/go.sum" "$ROOT/go.mod" | sha256sum | cut -d' ' -f1 >"$STATE_DIR/modules.stamp"

# --- Smoke test --------------------------------------------------------------
step "Smoke test: one cell on the kernel"
"$PY" - "$KERNEL_NAME" "$tmp/smoke.log" <<'EOF' || { cat "$tmp/smoke.log" >&2; die "the $KERNEL_NAME kernel does not run a cell"; }
import sys
import nbformat
from nbclient import NotebookClient
nb = nbformat.v4.new_notebook()
nb.cells = [nbformat.v4.new_code_cell('import "runtime"\nruntime.Version()')]
with open(sys.argv[2], "wb") as log:
    NotebookClient(nb, kernel_name=sys.argv[1], timeout=60, startup_timeout=60).execute(stdout=log, stderr=log)
print("    kernel answers:", nb.cells[0].outputs[-1]["data"]["text/plain"])
EOF

printf '\nsetup.sh: done in %ss. Run the notebooks with: notebooks/run.sh\n' "$(($(date +%s) - start))"
