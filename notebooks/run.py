"""Execute Go notebooks headless with the gophernotes kernel (see README.md).

Run through run.sh, which picks Debian's /usr/bin/python3 (the one that has
nbclient). Every notebook runs in a fresh kernel whose working directory is
the notebook's folder, one after the other (gomacro's plugin folders are not
safe for two kernels at once). A cell that reports an error, or runs past
the per-cell timeout, fails its notebook; the run goes on with the next
notebook and exits 1 at the end, naming each failed notebook and cell.

The executed copies lose gomacro's "// warning: skipping import of <generic
declaration>" lines, and consecutive stream outputs are joined, so that
re-running a notebook rewrites the same file.
"""

import argparse
import os
import pathlib
import re
import sys
import tempfile
import time

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

HERE = pathlib.Path(__file__).resolve().parent


def find_notebooks(paths):
    if paths:
        return [pathlib.Path(p).resolve() for p in paths]
    found = []
    for p in sorted(HERE.rglob("*.ipynb")):
        if ".ipynb_checkpoints" in p.parts:
            continue
        found.append(p)
    return found


def first_line(source):
    for line in source.splitlines():
        if line.strip():
            return line.strip()[:80]
    return "(empty)"


def error_text(cell):
    """The error outputs of an executed cell, as plain text."""
    parts = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            text = "{}: {}".format(out.get("ename", ""), out.get("evalue", "")).strip(": ")
            tb = "\n".join(out.get("traceback", []))
            if tb and tb not in text:
                text = text + "\n" + tb if text else tb
            parts.append(text)
    return "\n".join(parts)


# gomacro, gophernotes' interpreter, prints one of these for every generic
# declaration of a package an import cell loads (the standard library has
# many). They say nothing about the notebook and vary with the Go version.
GENERIC_WARNING = re.compile(r"^// warning: skipping import of .*$\n?", re.M)


def tidy_outputs(nb):
    """Drop gomacro's generic-import warnings and join consecutive stream
    outputs (the kernel splits them by timing), so that a re-run gives the
    same file."""
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        outputs = []
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream":
                out["text"] = GENERIC_WARNING.sub("", out["text"])
                if not out["text"]:
                    continue
                if outputs and outputs[-1].get("output_type") == "stream" and outputs[-1]["name"] == out["name"]:
                    outputs[-1]["text"] += out["text"]
                    continue
            outputs.append(out)
        cell["outputs"] = outputs


def run_notebook(path, out_path, log_path, kernel, timeout, startup_timeout):
    nb = nbformat.read(str(path), as_version=4)
    code_cells = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    times = {}
    started = {}

    def on_cell_start(cell, cell_index):
        started[cell_index] = time.monotonic()

    def on_cell_executed(cell, cell_index, execute_reply):
        times[cell_index] = time.monotonic() - started.get(cell_index, time.monotonic())
        n = code_cells.index(cell_index) + 1 if cell_index in code_cells else "?"
        print("    cell {:>2}/{} (#{}) {:7.1f}s  {}".format(
            n, len(code_cells), cell_index, times[cell_index], first_line(cell.source)), flush=True)

    client = NotebookClient(
        nb,
        timeout=timeout,
        startup_timeout=startup_timeout,
        kernel_name=kernel or nb.metadata.get("kernelspec", {}).get("name", "gophernotes"),
        resources={"metadata": {"path": str(path.parent)}},
        record_timing=False,
        allow_errors=False,
        on_cell_start=on_cell_start,
        on_cell_executed=on_cell_executed,
    )
    failure = None
    t0 = time.monotonic()
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log = open(str(log_path), "wb")
    try:
        # The kernel's own stdout and stderr (the go commands it runs to build
        # each import cell's plugin, compiler errors included) go to the log.
        client.execute(stdout=log, stderr=log)
    except CellTimeoutError as e:
        failure = ("timeout", str(e))
    except CellExecutionError as e:
        failure = ("error", str(e))
    except DeadKernelError as e:
        failure = ("dead kernel", str(e))
    except Exception as e:  # kernel did not start, bad notebook, ...
        failure = (type(e).__name__, str(e))
    finally:
        log.close()
    elapsed = time.monotonic() - t0

    # Find the failing cell: the first with an error output, else the one
    # that started last without finishing.
    bad_index = None
    for i in code_cells:
        if error_text(nb.cells[i]):
            bad_index = i
            break
    if failure and bad_index is None:
        unfinished = [i for i in started if i not in times]
        if unfinished:
            bad_index = max(unfinished)
    if bad_index is not None and failure is None:
        failure = ("error", error_text(nb.cells[bad_index]))

    tidy_outputs(nb)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(out_path))
    return failure, bad_index, code_cells, elapsed, nb


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("notebooks", nargs="*", help="notebooks to run (default: every *.ipynb under notebooks/)")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--inplace", action="store_true",
                      help="write executed outputs back into the notebooks (only those that passed)")
    mode.add_argument("--out", metavar="DIR",
                      help="write executed notebooks under DIR (default: a new temporary folder)")
    ap.add_argument("--timeout", type=int, default=int(os.environ.get("NOTEBOOK_CELL_TIMEOUT", "600")),
                    help="seconds one cell may run (default 600, or $NOTEBOOK_CELL_TIMEOUT)")
    ap.add_argument("--startup-timeout", type=int, default=120, help="seconds for the kernel to start")
    ap.add_argument("--kernel", default=os.environ.get("NOTEBOOK_KERNEL"),
                    help="kernel name (default: the notebook's own kernelspec, gophernotes)")
    args = ap.parse_args()

    notebooks = find_notebooks(args.notebooks)
    if not notebooks:
        print("run.py: no notebooks found under {}".format(HERE), file=sys.stderr)
        return 1
    out_dir = None
    if not args.inplace:
        out_dir = pathlib.Path(args.out).resolve() if args.out else pathlib.Path(tempfile.mkdtemp(prefix="notebooks-"))

    passed, failed = [], []
    log_dir = out_dir if out_dir is not None else pathlib.Path(tempfile.mkdtemp(prefix="notebooks-logs-"))
    for path in notebooks:
        rel = os.path.relpath(str(path), str(HERE))
        print("==> {}".format(rel), flush=True)
        log_path = log_dir / (rel + ".kernel.log")
        if args.inplace:
            # Executed outputs replace the notebook only if every cell passed;
            # a failed run's copy goes beside its kernel log.
            write_to = log_dir / rel
        else:
            write_to = out_dir / rel
        failure, bad, code_cells, elapsed, nb = run_notebook(
            path, write_to, log_path, args.kernel, args.timeout, args.startup_timeout)
        if failure is None:
            if args.inplace:
                nbformat.write(nb, str(path))
                write_to.unlink()
                write_to = path
            print("    ok in {:.1f}s -> {}".format(elapsed, write_to), flush=True)
            passed.append(rel)
            continue
        kind, message = failure
        if bad is not None:
            where = "cell {}/{} (cell #{} of the notebook, starting {!r})".format(
                code_cells.index(bad) + 1, len(code_cells), bad, first_line(nb.cells[bad].source))
        else:
            where = "no cell (the kernel itself)"
        print("FAIL {}: {} in {}".format(rel, kind, where), flush=True)
        for line in message.strip().splitlines()[-40:]:
            print("    | " + line)
        print("    last lines of the kernel log {}:".format(log_path))
        try:
            tail = log_path.read_text(errors="replace").strip().splitlines()[-30:]
        except OSError:
            tail = []
        for line in tail:
            print("    > " + line)
        print("    executed copy with outputs: {}".format(write_to), flush=True)
        failed.append("{}: {} in {}".format(rel, kind, where))

    print()
    if failed:
        print("failed notebooks:")
        for f in failed:
            print("  " + f)
    if out_dir is not None:
        print("executed notebooks and kernel logs written under {}".format(out_dir))
    else:
        print("kernel logs written under {}".format(log_dir))
    print("{} passed, {} failed".format(len(passed), len(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
