"""Small helpers of notebooks/setup.sh (run with /usr/bin/python3).

  helpers.py requires GO_MOD_JSON          `go mod edit -json` on stdin: one
                                           "path version" line per required
                                           module, the highest version when a
                                           module is required twice
  helpers.py align KERNEL_DEPS NB_MODULES  modules the kernel binary links that
                                           the notebooks' build list has at a
                                           higher version: "path@version" lines
  helpers.py proxy DOWNLOAD_JSON DIR       a file:// module proxy in DIR offering
                                           only the versions `go mod download
                                           -json all` reported
  helpers.py kernelspec FILE BINARY PROXY  write the kernel.json
"""

import json
import os
import re
import sys


def semver_key(v):
    """Sort key for a Go module version (semver, pseudo-versions included)."""
    m = re.match(r"^v(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$", v)
    if not m:
        raise ValueError("not a module version: " + v)
    major, minor, patch, pre = int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4)
    if pre is None:
        return (major, minor, patch, 1, ())
    ids = tuple((0, int(i), "") if i.isdigit() else (1, 0, i) for i in pre.split("."))
    return (major, minor, patch, 0, ids)


def read_json_stream(text):
    dec = json.JSONDecoder()
    pos = 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            return
        obj, pos = dec.raw_decode(text, pos)
        yield obj


def requires():
    best = {}
    for r in json.load(sys.stdin).get("Require") or []:
        path, version = r["Path"], r["Version"]
        if path not in best or semver_key(version) > semver_key(best[path]):
            best[path] = version
    for path in sorted(best):
        print(path, best[path])


def read_pairs(path):
    pairs = {}
    for line in open(path):
        fields = line.split()
        if len(fields) >= 2:
            pairs[fields[0]] = fields[1]
    return pairs


def align(kernel_deps, nb_modules):
    kernel = read_pairs(kernel_deps)
    notebooks = read_pairs(nb_modules)
    older = []
    for path in sorted(kernel):
        v = notebooks.get(path)
        if v and semver_key(v) > semver_key(kernel[path]):
            print("{}@{}".format(path, v))
        elif v and v != kernel[path]:
            older.append("{} {} (notebooks: {})".format(path, kernel[path], v))
    if older:
        print("    note: the kernel links newer versions of modules than the notebooks' go.mod has;\n"
              "    an import cell whose plugin contains one of their packages would not load:\n      "
              + "\n      ".join(older), file=sys.stderr)


def escape(s):  # the module cache's case encoding
    return "".join("!" + c.lower() if c.isupper() else c for c in s)


def proxy(download_json, out):
    count = 0
    for mod in read_json_stream(open(download_json).read()):
        if mod.get("Error"):
            sys.exit("go mod download {}@{}: {}".format(mod["Path"], mod["Version"], mod["Error"]))
        vdir = os.path.join(out, escape(mod["Path"]), "@v")
        os.makedirs(vdir, exist_ok=True)
        with open(os.path.join(vdir, "list"), "w") as f:
            f.write(mod["Version"] + "\n")
        for key, ext in (("Info", ".info"), ("GoMod", ".mod"), ("Zip", ".zip")):
            if mod.get(key):
                os.symlink(mod[key], os.path.join(vdir, escape(mod["Version"]) + ext))
        count += 1
    print("    {} modules, one version each".format(count))


def kernelspec(path, binary, proxy_dir):
    spec = {
        "argv": [binary, "{connection_file}"],
        "display_name": "Go (gophernotes)",
        "language": "go",
        "env": {
            # gomacro (gophernotes' interpreter) does not know types.Alias.
            "GODEBUG": "gotypesalias=0",
            # Each import cell is built as a plugin after a `go get` without
            # a version: this proxy offers one version of each module only.
            "GOPROXY": "file://" + proxy_dir,
            "GOSUMDB": "off",
            "GOTOOLCHAIN": "local",
            "CGO_ENABLED": "1",
        },
    }
    with open(path, "w") as f:
        json.dump(spec, f, indent=1)
        f.write("\n")


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "requires":
        requires()
    elif cmd == "align":
        align(*args)
    elif cmd == "proxy":
        proxy(*args)
    elif cmd == "kernelspec":
        kernelspec(*args)
    else:
        sys.exit("helpers.py: unknown command " + cmd)


if __name__ == "__main__":
    main()
