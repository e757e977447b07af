// Package onnxtest runs ONNX models in ONNX Runtime (npm's
// onnxruntime-node, under Node) and through ONNX's checker (Debian's
// python3-onnx) for the tests of the ONNX export. Tests call Require
// first, which skips them where the tools are missing and fails them under
// CI=true, where .ci/run installs them.
package onnxtest

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"gorgonia.org/tensor"
)

// Python is Debian's interpreter, which python3-onnx installs into
// (another python3 may come first on PATH).
const Python = "/usr/bin/python3"

// ORTVersion is the version of onnxruntime-node the tests run.
const ORTVersion = "1.30.0"

// here is this package's folder.
func here() string {
	_, self, _, _ := runtime.Caller(0)
	return filepath.Dir(self)
}

// Modules is the node_modules folder that holds onnxruntime-node:
// $ONNXRUNTIME_NODE_MODULES if set, else testdata/ort/node_modules of this
// package, where .ci/run installs it (npm install --ignore-scripts
// --prefix internal/onnxtest/testdata/ort onnxruntime-node@1.30.0).
func Modules() string {
	if m := os.Getenv("ONNXRUNTIME_NODE_MODULES"); m != "" {
		return m
	}
	return filepath.Join(here(), "testdata", "ort", "node_modules")
}

// Require skips t unless Node, onnxruntime-node ORTVersion (in Modules)
// and python3-onnx are installed, or fails it under CI=true.
func Require(t testing.TB) {
	t.Helper()
	if err := missing(); err != "" {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
}

// missing says what Require misses, with how to install it; "" if nothing.
func missing() string {
	if _, err := exec.LookPath("node"); err != nil {
		return "node not found: apt-get install nodejs (Node 20)"
	}
	var pkg struct{ Version string }
	b, err := os.ReadFile(filepath.Join(Modules(), "onnxruntime-node", "package.json"))
	if err == nil {
		err = json.Unmarshal(b, &pkg)
	}
	if err != nil || pkg.Version != ORTVersion {
		return fmt.Sprintf("onnxruntime-node %s not found in %s (have %q): npm install --ignore-scripts --prefix internal/onnxtest/testdata/ort onnxruntime-node@%s, or set ONNXRUNTIME_NODE_MODULES to the node_modules that holds it",
			ORTVersion, Modules(), pkg.Version, ORTVersion)
	}
	if err := exec.Command(Python, "-c", "import onnx").Run(); err != nil {
		return "ONNX's checker not found for " + Python + ": apt-get install python3-onnx"
	}
	return ""
}

// Check runs ONNX's checker with full_check on each model file, failing t
// with its message for any it refuses.
func Check(t testing.TB, paths ...string) {
	t.Helper()
	Require(t)
	out, err := exec.Command(Python, append([]string{filepath.Join(here(), "check.py")}, paths...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("onnx.checker: %v\n%s", err, out)
	}
}

// Node runs the Node script with args, onnxruntime-node on its module
// path, stdin its standard input, and returns what it prints; t fails
// with its standard error if it fails.
func Node(t testing.TB, stdin, script string, args ...string) []byte {
	t.Helper()
	Require(t)
	cmd := exec.Command("node", append([]string{script}, args...)...)
	cmd.Env = append(os.Environ(), "NODE_PATH="+Modules())
	cmd.Stdin = strings.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s: %v\n%s", filepath.Base(script), err, stderr.Bytes())
	}
	return out
}

// Job is a run of the ONNX model file Model on Inputs, by name. Basic
// limits ONNX Runtime's graph optimizations to its basic ones, whose
// kernels all take doubles (its extended fusions' may not: x·σ(x) fused to
// QuickGelu has float kernels alone).
type Job struct {
	Model  string
	Inputs map[string]*tensor.Dense
	Basic  bool
}

// value is a tensor in the files run.js reads and writes.
type value struct {
	Name string `json:"name,omitempty"`
	Type string `json:"type"`
	Dims []int  `json:"dims"`
	File string `json:"file"`
}

// job is a Job as run.js reads it.
type job struct {
	Model        string  `json:"model"`
	Inputs       []value `json:"inputs"`
	Out          string  `json:"out"`
	Optimization string  `json:"optimization,omitempty"`
}

// Run runs the jobs in ONNX Runtime, in one Node process, and returns each
// job's outputs by name: float32, float64 or int (ONNX's int64) tensors.
func Run(t testing.TB, jobs ...Job) []map[string]*tensor.Dense {
	t.Helper()
	dir := t.TempDir()
	var list []job
	for i, j := range jobs {
		out := filepath.Join(dir, fmt.Sprint(i))
		if err := os.Mkdir(out, 0o755); err != nil {
			t.Fatal(err)
		}
		jb := job{Model: j.Model, Out: out}
		if j.Basic {
			jb.Optimization = "basic"
		}
		for name, x := range j.Inputs {
			v := value{Name: name, Dims: x.Shape(), File: filepath.Join(out, "in"+fmt.Sprint(len(jb.Inputs)))}
			raw, typ := encode(t, x)
			v.Type = typ
			if err := os.WriteFile(v.File, raw, 0o644); err != nil {
				t.Fatal(err)
			}
			jb.Inputs = append(jb.Inputs, v)
		}
		list = append(list, jb)
	}
	manifest := filepath.Join(dir, "jobs.json")
	b, _ := json.Marshal(list)
	if err := os.WriteFile(manifest, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var results []map[string]value
	out := Node(t, "", filepath.Join(here(), "run.js"), manifest)
	if err := json.Unmarshal(out, &results); err != nil {
		t.Fatalf("run.js printed %.200q: %v", out, err)
	}
	all := make([]map[string]*tensor.Dense, len(results))
	for i, r := range results {
		all[i] = map[string]*tensor.Dense{}
		for name, v := range r {
			all[i][name] = decodeValue(t, v)
		}
	}
	return all
}

// encode is x's elements little-endian and ONNX Runtime's name of its type.
func encode(t testing.TB, x *tensor.Dense) ([]byte, string) {
	var raw []byte
	switch d := x.Data().(type) {
	case []float32:
		for _, v := range d {
			raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(v))
		}
		return raw, "float32"
	case []float64:
		for _, v := range d {
			raw = binary.LittleEndian.AppendUint64(raw, math.Float64bits(v))
		}
		return raw, "float64"
	case []int:
		for _, v := range d {
			raw = binary.LittleEndian.AppendUint64(raw, uint64(int64(v)))
		}
		return raw, "int64"
	}
	t.Fatalf("onnxtest: inputs of %T", x.Data())
	return nil, ""
}

// decodeValue reads the output v from its file.
func decodeValue(t testing.TB, v value) *tensor.Dense {
	raw, err := os.ReadFile(v.File)
	if err != nil {
		t.Fatal(err)
	}
	dims := v.Dims
	if len(dims) == 0 {
		dims = []int{1}
	}
	switch v.Type {
	case "float32":
		d := make([]float32, len(raw)/4)
		for i := range d {
			d[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		return tensor.New(tensor.WithShape(dims...), tensor.WithBacking(d))
	case "float64":
		d := make([]float64, len(raw)/8)
		for i := range d {
			d[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
		}
		return tensor.New(tensor.WithShape(dims...), tensor.WithBacking(d))
	case "int64":
		d := make([]int, len(raw)/8)
		for i := range d {
			d[i] = int(int64(binary.LittleEndian.Uint64(raw[8*i:])))
		}
		return tensor.New(tensor.WithShape(dims...), tensor.WithBacking(d))
	}
	t.Fatalf("onnxtest: an output of type %s", v.Type)
	return nil
}
