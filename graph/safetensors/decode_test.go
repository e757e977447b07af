package safetensors

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
)

// rawFile returns a safetensors file of header and buf, with a size prefix
// of len(header).
func rawFile(header string, buf []byte) []byte {
	return sizedFile(uint64(len(header)), header, buf)
}

// sizedFile returns a safetensors file whose size prefix says size.
func sizedFile(size uint64, header string, buf []byte) []byte {
	out := binary.LittleEndian.AppendUint64(nil, size)
	out = append(out, header...)
	return append(out, buf...)
}

func TestDecodeValid(t *testing.T) {
	tests := []struct {
		name    string
		data    []byte
		names   []string
		meta    map[string]string
		lengths map[string]int
	}{
		{
			name:  "empty header",
			data:  rawFile("{}", nil),
			names: []string{},
		},
		{
			name:  "padded header and metadata",
			data:  rawFile(` {"__metadata__":{"k":"v"},"x":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}   `, []byte{1, 2}),
			names: []string{"x"}, meta: map[string]string{"k": "v"}, lengths: map[string]int{"x": 2},
		},
		{
			name: "offsets in any header order, zero-size tensors",
			data: rawFile(`{"b":{"dtype":"F32","shape":[1],"data_offsets":[2,6]},`+
				`"e":{"dtype":"F64","shape":[0,3],"data_offsets":[2,2]},`+
				`"a":{"dtype":"I16","shape":[],"data_offsets":[0,2]},`+
				`"z":{"dtype":"BOOL","shape":[0],"data_offsets":[6,6]},`+
				`"extra":{"dtype":"U8","shape":[],"data_offsets":[6,7],"ignored":true}}`, make([]byte, 7)),
			names:   []string{"a", "b", "e", "extra", "z"},
			lengths: map[string]int{"a": 2, "b": 4, "e": 0, "extra": 1, "z": 0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Decode(tt.data)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(f.Names(), ","); got != strings.Join(tt.names, ",") {
				t.Errorf("names %q, want %q", got, tt.names)
			}
			if len(f.Metadata) != len(tt.meta) || f.Metadata["k"] != tt.meta["k"] {
				t.Errorf("metadata %v, want %v", f.Metadata, tt.meta)
			}
			for name, n := range tt.lengths {
				if got := len(f.Tensors[name].Data); got != n {
					t.Errorf("tensor %q has %d bytes, want %d", name, got, n)
				}
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	valid := rawFile(`{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, make([]byte, 8))
	f32 := func(shape, offsets string) string {
		return `"dtype":"F32","shape":` + shape + `,"data_offsets":` + offsets
	}
	tests := []struct {
		name string
		data []byte
		want []string
	}{
		{"empty input", nil, []string{"truncated", "0 bytes"}},
		{"short size prefix", []byte{1, 0, 0}, []string{"truncated", "3 bytes"}},
		{"header size beyond file", sizedFile(100, "{}", nil), []string{"header size 100", "2 bytes"}},
		{"header size overflows", sizedFile(1<<63, "{}", nil), []string{"header size 9223372036854775808"}},
		{"truncated data", valid[:len(valid)-3], []string{`tensor "w"`, "out of bounds", "5-byte buffer"}},
		{"bad JSON", rawFile(`{"w":{"dtype":`, nil), []string{"header JSON"}},
		{"not JSON", rawFile(`hello`, nil), []string{"header JSON", "invalid character"}},
		{"not an object", rawFile(`[1]`, nil), []string{"not a JSON object"}},
		{"not UTF-8", rawFile("{\"\xff\":1}", nil), []string{"not valid UTF-8"}},
		{"data after JSON", rawFile(`{} {}`, nil), []string{"data after its JSON object"}},
		{"duplicate tensor", rawFile(`{"a":{`+f32("[]", "[0,4]")+`},"a":{`+f32("[]", "[4,8]")+`}}`, make([]byte, 8)), []string{`"a" twice`}},
		{"duplicate metadata", rawFile(`{"__metadata__":{},"__metadata__":{}}`, nil), []string{`"__metadata__" twice`}},
		{"metadata field twice", rawFile(`{"__metadata__":{"config":"a","config":"b"}}`, nil), []string{`__metadata__: field "config" appears twice`}},
		{"metadata not strings", rawFile(`{"__metadata__":{"n":1}}`, nil), []string{"__metadata__ is not an object of strings"}},
		{"metadata null", rawFile(`{"__metadata__":null}`, nil), []string{"__metadata__ is not an object of strings"}},
		{"tensor not an object", rawFile(`{"w":3}`, nil), []string{`tensor "w"`, "cannot unmarshal"}},
		{"missing dtype", rawFile(`{"w":{"shape":[],"data_offsets":[0,0]}}`, nil), []string{`tensor "w"`, "needs dtype"}},
		{"missing shape", rawFile(`{"w":{"dtype":"F32","data_offsets":[0,4]}}`, make([]byte, 4)), []string{`tensor "w"`, "needs dtype"}},
		{"three offsets", rawFile(`{"w":{`+f32("[1]", "[0,4,8]")+`}}`, make([]byte, 8)), []string{`tensor "w"`, "two data_offsets"}},
		{"negative offset", rawFile(`{"w":{`+f32("[1]", "[-4,0]")+`}}`, nil), []string{`tensor "w"`, "cannot unmarshal"}},
		{"fractional dimension", rawFile(`{"w":{`+f32("[1.5]", "[0,4]")+`}}`, make([]byte, 4)), []string{`tensor "w"`, "cannot unmarshal"}},
		{"negative dimension", rawFile(`{"w":{`+f32("[-1]", "[0,4]")+`}}`, make([]byte, 4)), []string{`tensor "w"`, "negative dimension"}},
		{"shape overflows", rawFile(`{"w":{`+f32("[4294967296,4294967296]", "[0,4]")+`}}`, make([]byte, 4)), []string{`tensor "w"`, "too many elements"}},
		{"end before begin", rawFile(`{"w":{`+f32("[1]", "[4,0]")+`}}`, make([]byte, 4)), []string{`tensor "w"`, "[4, 0] out of bounds"}},
		{"end beyond buffer", rawFile(`{"w":{`+f32("[2]", "[0,8]")+`}}`, make([]byte, 4)), []string{`tensor "w"`, "out of bounds of the 4-byte buffer"}},
		{
			"overlapping offsets",
			rawFile(`{"a":{`+f32("[2]", "[0,8]")+`},"b":{`+f32("[2]", "[4,12]")+`}}`, make([]byte, 12)),
			[]string{`tensor "b"`, "overlap", `tensor "a" [0, 8]`},
		},
		{
			"same offsets",
			rawFile(`{"a":{`+f32("[1]", "[0,4]")+`},"b":{`+f32("[1]", "[0,4]")+`}}`, make([]byte, 4)),
			[]string{`tensor "b"`, "overlap", `tensor "a"`},
		},
		{
			"gap between tensors",
			rawFile(`{"a":{`+f32("[1]", "[0,4]")+`},"b":{`+f32("[1]", "[8,12]")+`}}`, make([]byte, 12)),
			[]string{`tensor "b"`, "bytes [4, 8)", "belong to no tensor"},
		},
		{"gap at start", rawFile(`{"a":{`+f32("[1]", "[4,8]")+`}}`, make([]byte, 8)), []string{`tensor "a"`, "bytes [0, 4)"}},
		{"bytes after last tensor", rawFile(`{"a":{`+f32("[1]", "[0,4]")+`}}`, make([]byte, 6)), []string{"bytes [4, 6) at the end"}},
		{"wrong byte length", rawFile(`{"w":{`+f32("[3]", "[0,8]")+`}}`, make([]byte, 8)), []string{`tensor "w"`, "has 8 bytes", "[3] of F32 needs 12"}},
		{"unknown dtype", rawFile(`{"w":{"dtype":"F128","shape":[1],"data_offsets":[0,16]}}`, make([]byte, 16)), []string{`tensor "w"`, `unknown dtype "F128"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Decode(tt.data)
			if err == nil {
				t.Fatalf("Decode succeeded with %d tensors, want error", len(f.Tensors))
			}
			if f != nil {
				t.Errorf("Decode returned a file with its error")
			}
			msg := err.Error()
			for _, w := range append([]string{"safetensors: decode: "}, tt.want...) {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
		})
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(rawFile(`{}`, nil))
	f.Add(rawFile(`{"__metadata__":{"a":"b"},"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, make([]byte, 8)))
	f.Add(rawFile(`{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"b":{"dtype":"I16","shape":[0],"data_offsets":[1,1]}}`, []byte{7}))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Decode(data)
		if err != nil {
			return
		}
		tensors := make([]Tensor, 0, len(file.Tensors))
		for _, name := range file.Names() {
			tensors = append(tensors, file.Tensors[name])
		}
		var buf bytes.Buffer
		if Encode(&buf, tensors, file.Metadata) != nil {
			return // Names that Encode refuses, such as "", may be read.
		}
		again, err := Decode(buf.Bytes())
		if err != nil {
			t.Fatalf("decoding re-encoded file: %v", err)
		}
		assertSameFile(t, again, file)
	})
}
