package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// sampleTensors returns tensors of several dtypes and shapes, in no order.
func sampleTensors() []Tensor {
	return []Tensor{
		{Name: "z.bias", DType: F32, Shape: []int{3}, Data: seq(12)},
		{Name: "a.weight", DType: F64, Shape: []int{2, 2}, Data: seq(32)},
		{Name: "tokens", DType: U8, Shape: []int{5}, Data: seq(5)},
		{Name: "half", DType: F16, Shape: []int{1, 3}, Data: seq(6)},
		{Name: "step", DType: I64, Shape: []int{}, Data: seq(8)},
		{Name: "empty", DType: BF16, Shape: []int{0, 7}, Data: []byte{}},
		{Name: "ünï <&> \"quoted\"", DType: I32, Shape: []int{1}, Data: seq(4)},
	}
}

// seq returns n bytes counting up from 1.
func seq(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i + 1)
	}
	return b
}

// assertSameFile fails t unless got and want hold the same content.
func assertSameFile(t *testing.T, got, want *File) {
	t.Helper()
	if len(got.Metadata) != len(want.Metadata) || (len(want.Metadata) > 0 && !reflect.DeepEqual(got.Metadata, want.Metadata)) {
		t.Errorf("metadata %v, want %v", got.Metadata, want.Metadata)
	}
	if !reflect.DeepEqual(got.Names(), want.Names()) {
		t.Fatalf("names %q, want %q", got.Names(), want.Names())
	}
	for name, w := range want.Tensors {
		g := got.Tensors[name]
		if g.Name != w.Name || g.DType != w.DType || !reflect.DeepEqual(g.Shape, w.Shape) || !bytes.Equal(g.Data, w.Data) {
			t.Errorf("tensor %q is %+v, want %+v", name, g, w)
		}
	}
}

// fileOf returns the File that holds tensors and metadata.
func fileOf(tensors []Tensor, metadata map[string]string) *File {
	f := &File{Metadata: metadata, Tensors: map[string]Tensor{}}
	for _, t := range tensors {
		f.Tensors[t.Name] = t
	}
	return f
}

func TestEncodeRoundTrip(t *testing.T) {
	tests := []struct {
		name     string
		tensors  []Tensor
		metadata map[string]string
	}{
		{"nothing", nil, nil},
		{"metadata only", nil, map[string]string{"format": "pt"}},
		{"tensors only", sampleTensors(), nil},
		{"tensors and metadata", sampleTensors(), map[string]string{"format": "pt", "ü<&>": "\"x\"\n", "": ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Encode(&buf, tt.tensors, tt.metadata); err != nil {
				t.Fatal(err)
			}
			got, err := Decode(buf.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			assertSameFile(t, got, fileOf(tt.tensors, tt.metadata))
			var again bytes.Buffer
			if err := Encode(&again, tt.tensors, tt.metadata); err != nil || !bytes.Equal(again.Bytes(), buf.Bytes()) {
				t.Errorf("second encoding differs (error %v)", err)
			}
		})
	}
}

func TestEncodeLayout(t *testing.T) {
	var buf bytes.Buffer
	if err := Encode(&buf, sampleTensors(), map[string]string{"format": "pt"}); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	n := binary.LittleEndian.Uint64(data)
	if (prefixLen+n)%8 != 0 {
		t.Errorf("data starts at %d, not a multiple of 8", prefixLen+n)
	}
	header := data[prefixLen : prefixLen+n]
	var infos map[string]json.RawMessage
	if err := json.Unmarshal(header, &infos); err != nil {
		t.Fatal(err)
	}
	for _, tensor := range sampleTensors() {
		var info headerInfo
		if err := json.Unmarshal(infos[tensor.Name], &info); err != nil {
			t.Fatal(err)
		}
		if begin := info.DataOffsets[0]; begin%uint64(tensor.DType.Size()) != 0 {
			t.Errorf("tensor %q of %s starts at %d, not aligned", tensor.Name, tensor.DType, begin)
		}
	}
}

func TestEncodeExactBytes(t *testing.T) {
	tensors := []Tensor{
		{Name: "b", DType: F32, Shape: []int{2}, Data: []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0}}, // 1, -2
		{Name: "a", DType: I64, Shape: []int{}, Data: []byte{7, 0, 0, 0, 0, 0, 0, 0}},
	}
	header := `{"__metadata__":{"format":"pt"},` +
		`"a":{"dtype":"I64","shape":[],"data_offsets":[0,8]},` +
		`"b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}}`
	// The header JSON is 138 bytes; 6 spaces pad it to 144 = 0x90.
	var want []byte
	want = append(want, 0x90, 0, 0, 0, 0, 0, 0, 0)
	want = append(want, header+"      "...)
	want = append(want, 7, 0, 0, 0, 0, 0, 0, 0)
	want = append(want, 0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0)

	var buf bytes.Buffer
	if err := Encode(&buf, tensors, map[string]string{"format": "pt"}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("encoding\n%q\nwant\n%q", buf.Bytes(), want)
	}
}

func TestEncodeErrors(t *testing.T) {
	ok := Tensor{Name: "ok", DType: F32, Shape: []int{1}, Data: seq(4)}
	tests := []struct {
		name     string
		tensors  []Tensor
		metadata map[string]string
		want     string
	}{
		{"duplicate name", []Tensor{ok, ok}, nil, `tensor "ok" given twice`},
		{"empty name", []Tensor{{DType: U8, Shape: []int{}, Data: seq(1)}}, nil, "empty tensor name"},
		{"reserved name", []Tensor{{Name: "__metadata__", DType: U8, Shape: []int{}, Data: seq(1)}}, nil, "reserved"},
		{"name not UTF-8", []Tensor{{Name: "\xff", DType: U8, Shape: []int{}, Data: seq(1)}}, nil, "not valid UTF-8"},
		{"unknown dtype", []Tensor{ok, {Name: "w", DType: "F128", Shape: []int{1}, Data: seq(16)}}, nil, `tensor "w": unknown dtype "F128"`},
		{"short data", []Tensor{{Name: "w", DType: F64, Shape: []int{2}, Data: seq(15)}}, nil, `tensor "w": has 15 bytes, shape [2] of F64 needs 16`},
		{"negative dimension", []Tensor{{Name: "w", DType: F64, Shape: []int{-2}}}, nil, `tensor "w": negative dimension`},
		{"metadata not UTF-8", []Tensor{ok}, map[string]string{"k": "\xff"}, `metadata "k"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			err := Encode(&buf, tt.tensors, tt.metadata)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "safetensors: encode: ") {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
			if buf.Len() != 0 {
				t.Errorf("wrote %d bytes despite the error", buf.Len())
			}
		})
	}
}

// failingWriter accepts n bytes and fails after that.
type failingWriter struct{ n int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		return 0, errors.New("disk full")
	}
	w.n -= len(p)
	return len(p), nil
}

func TestEncodeWriteError(t *testing.T) {
	tensors := []Tensor{{Name: "w", DType: U8, Shape: []int{3}, Data: seq(3)}}
	tests := []struct {
		accept int
		want   string
	}{
		{0, "write header size: disk full"},
		{8, "write header: disk full"},
		{8 + 56, `write tensor "w": disk full`},
	}
	for _, tt := range tests {
		err := Encode(&failingWriter{tt.accept}, tensors, nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("after %d bytes: error %v, want one containing %q", tt.accept, err, tt.want)
		}
	}
}
