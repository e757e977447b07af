package safetensors

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"gorgonia.org/tensor"
)

// pythonHint says how to get what the cross-checks need.
const pythonHint = "the PyTorch cross-check needs python3 with torch: apt-get install python3-torch " +
	"(set SAFETENSORS_PYTHON to choose the interpreter; the reference safetensors package is used when importable)"

// pyReport is what testdata/crosscheck.py prints.
type pyReport struct {
	Impl     string            `json:"impl"`
	Metadata map[string]string `json:"metadata"`
	Tensors  map[string]struct {
		DType   DType  `json:"dtype"`
		Shape   []int  `json:"shape"`
		Raw     string `json:"raw"`
		Float64 string `json:"float64"`
	} `json:"tensors"`
}

// findPython returns an interpreter that imports torch. Without one it
// fails t under CI=true and skips t otherwise.
func findPython(t *testing.T) string {
	t.Helper()
	candidates := []string{"/usr/bin/python3", "python3"}
	if p := os.Getenv("SAFETENSORS_PYTHON"); p != "" {
		candidates = []string{p}
	}
	for _, p := range candidates {
		if exec.Command(p, "-c", "import torch").Run() == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal(pythonHint)
	}
	t.Skip(pythonHint)
	return ""
}

// runPython runs testdata/crosscheck.py in mode on path and returns its report.
func runPython(t *testing.T, mode, path string) *pyReport {
	t.Helper()
	cmd := exec.Command(findPython(t), filepath.Join("testdata", "crosscheck.py"), mode, path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("crosscheck.py %s: %v\n%s", mode, err, stderr.Bytes())
	}
	var r pyReport
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("crosscheck.py %s printed %q: %v", mode, out, err)
	}
	t.Logf("Python side used the %s implementation", r.Impl)
	return &r
}

// compareReport fails t unless f holds what the Python report r describes.
func compareReport(t *testing.T, f *File, r *pyReport) {
	t.Helper()
	if !reflect.DeepEqual(f.Metadata, r.Metadata) {
		t.Errorf("metadata: Go %v, Python %v", f.Metadata, r.Metadata)
	}
	if len(f.Tensors) != len(r.Tensors) {
		t.Errorf("Go has %d tensors, Python %d", len(f.Tensors), len(r.Tensors))
	}
	for name, want := range r.Tensors {
		got, ok := f.Tensors[name]
		if !ok {
			t.Errorf("tensor %q: missing in Go", name)
			continue
		}
		if got.DType != want.DType || !reflect.DeepEqual(got.Shape, want.Shape) || hex.EncodeToString(got.Data) != want.Raw {
			t.Errorf("tensor %q: Go %s %v %x, Python %s %v %s", name, got.DType, got.Shape, got.Data, want.DType, want.Shape, want.Raw)
		}
		if want.Float64 != "" {
			compareFloats(t, got, want.Float64)
		}
	}
}

// compareFloats fails t unless the values of got equal the little-endian
// float64 values in hex string want, bit for bit or both NaN.
func compareFloats(t *testing.T, got Tensor, want string) {
	t.Helper()
	vals, err := got.Float64s()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := hex.DecodeString(want)
	if err != nil || len(raw) != 8*len(vals) {
		t.Fatalf("tensor %q: Python values %q for %d Go values (%v)", got.Name, want, len(vals), err)
	}
	wantVals, err := Tensor{Name: got.Name, DType: F64, Shape: []int{len(vals)}, Data: raw}.Float64s()
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vals {
		w := wantVals[i]
		if math.Float64bits(v) != math.Float64bits(w) && !(math.IsNaN(v) && math.IsNaN(w)) {
			t.Errorf("tensor %q [%d]: Go %g, torch %g", got.Name, i, v, w)
		}
	}
}

func TestPythonWritesGoReads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "torch.safetensors")
	r := runPython(t, "write", path)
	f, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	compareReport(t, f, r)
}

func TestGoWritesPythonReads(t *testing.T) {
	negZero := float32(math.Copysign(0, -1))
	var tensors []Tensor
	for _, d := range []struct {
		name  string
		dense *tensor.Dense
	}{
		{"f32", tensor.New(tensor.WithShape(2, 3), tensor.WithBacking([]float32{0, 0.5, -1.25, 3e38, 1e-45, negZero}))},
		{"f64", tensor.New(tensor.WithShape(3), tensor.WithBacking([]float64{0.1, math.Inf(-1), 1e-300}))},
		{"i64", tensor.New(tensor.WithShape(1, 2), tensor.WithBacking([]int64{-1, math.MaxInt64}))},
		{"i32", tensor.New(tensor.WithShape(2), tensor.WithBacking([]int32{math.MinInt32, 7}))},
		{"scalar", tensor.New(tensor.FromScalar(float64(-2.5)))},
	} {
		st, err := FromDense(d.name, d.dense)
		if err != nil {
			t.Fatal(err)
		}
		tensors = append(tensors, st)
	}
	tensors = append(tensors,
		Tensor{Name: "f16", DType: F16, Shape: []int{4}, Data: le16(0x3c00, 0x8001, 0x7bff, 0xfc00)},
		Tensor{Name: "bf16", DType: BF16, Shape: []int{2, 1}, Data: le16(0x3fc0, 0x0001)},
		Tensor{Name: "u8", DType: U8, Shape: []int{3}, Data: []byte{1, 2, 255}},
		Tensor{Name: "bool", DType: BOOL, Shape: []int{1}, Data: []byte{1}},
		Tensor{Name: "empty", DType: F32, Shape: []int{0, 2}, Data: nil},
	)
	meta := map[string]string{"format": "pt", "written by": "Go"}
	path := filepath.Join(t.TempDir(), "go.safetensors")
	if err := Write(path, tensors, meta); err != nil {
		t.Fatal(err)
	}
	compareReport(t, fileOf(tensors, meta), runPython(t, "read", path))
}
