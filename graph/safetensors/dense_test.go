package safetensors

import (
	"bytes"
	"encoding/binary"
	"math"
	"reflect"
	"strings"
	"testing"

	"gorgonia.org/tensor"
)

// le16 returns the little-endian bytes of vals.
func le16(vals ...uint16) []byte {
	var b []byte
	for _, v := range vals {
		b = binary.LittleEndian.AppendUint16(b, v)
	}
	return b
}

// le32 returns the little-endian bytes of the float32 vals.
func le32(vals ...float32) []byte {
	var b []byte
	for _, v := range vals {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return b
}

// le64 returns the little-endian bytes of the float64 vals.
func le64(vals ...float64) []byte {
	var b []byte
	for _, v := range vals {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	return b
}

func TestHalfToFloat32(t *testing.T) {
	tests := []struct {
		half uint16
		want float32
	}{
		{0x0000, 0},
		{0x8000, float32(math.Copysign(0, -1))},
		{0x3c00, 1},
		{0xc000, -2},
		{0x3555, 0.333251953125},
		{0x7bff, 65504},
		{0x0400, 1.0 / 16384},
		{0x0001, float32(math.Ldexp(1, -24))},
		{0x83ff, -float32(math.Ldexp(1023, -24))},
		{0x7c00, float32(math.Inf(1))},
		{0xfc00, float32(math.Inf(-1))},
	}
	for _, tt := range tests {
		got := halfToFloat32(tt.half)
		if math.Float32bits(got) != math.Float32bits(tt.want) {
			t.Errorf("halfToFloat32(%#04x) = %g, want %g", tt.half, got, tt.want)
		}
	}
	for _, nan := range []uint16{0x7e00, 0xfc01, 0x7fff} {
		if got := halfToFloat32(nan); !math.IsNaN(float64(got)) {
			t.Errorf("halfToFloat32(%#04x) = %g, want NaN", nan, got)
		}
	}
}

func TestFloats(t *testing.T) {
	tests := []struct {
		dtype DType
		data  []byte
		want  []float64
	}{
		{F64, le64(0.1, -3), []float64{0.1, -3}},
		{F32, le32(0.1, 2.5), []float64{float64(float32(0.1)), 2.5}},
		{F16, le16(0x3c00, 0xc100), []float64{1, -2.5}},
		{BF16, le16(0x3fc0, 0xc2f7, 0x0001), []float64{1.5, -123.5, math.Ldexp(1, -133)}},
	}
	for _, tt := range tests {
		tensor := Tensor{Name: "x", DType: tt.dtype, Shape: []int{len(tt.want)}, Data: tt.data}
		got64, err := tensor.Float64s()
		if err != nil || !reflect.DeepEqual(got64, tt.want) {
			t.Errorf("%s: Float64s() = %v, %v; want %v", tt.dtype, got64, err, tt.want)
		}
		got32, err := tensor.Float32s()
		if err != nil {
			t.Errorf("%s: Float32s: %v", tt.dtype, err)
		}
		for i, w := range tt.want {
			if got32[i] != float32(w) {
				t.Errorf("%s: Float32s()[%d] = %g, want %g", tt.dtype, i, got32[i], float32(w))
			}
		}
	}
}

func TestTensorDense(t *testing.T) {
	mat := Tensor{Name: "m", DType: F64, Shape: []int{2, 3}, Data: le64(1, 2, 3, 4, 5, 6)}
	tests := []struct {
		name   string
		tensor Tensor
		dt     tensor.Dtype
		shape  tensor.Shape
		want   interface{}
	}{
		{"F64 as float64", mat, tensor.Float64, tensor.Shape{2, 3}, []float64{1, 2, 3, 4, 5, 6}},
		{"F64 as float32", mat, tensor.Float32, tensor.Shape{2, 3}, []float32{1, 2, 3, 4, 5, 6}},
		{"F32 as float64", Tensor{Name: "v", DType: F32, Shape: []int{2}, Data: le32(0.5, -1)}, tensor.Float64, tensor.Shape{2}, []float64{0.5, -1}},
		{"BF16 as float32", Tensor{Name: "v", DType: BF16, Shape: []int{1, 1}, Data: le16(0x4000)}, tensor.Float32, tensor.Shape{1, 1}, []float32{2}},
		{"F16 scalar", Tensor{Name: "s", DType: F16, Shape: []int{}, Data: le16(0x3800)}, tensor.Float32, tensor.ScalarShape(), float32(0.5)},
		{"I64", Tensor{Name: "i", DType: I64, Shape: []int{2}, Data: append(bytes.Repeat([]byte{0xff}, 8), 9, 0, 0, 0, 0, 0, 0, 0)}, tensor.Int64, tensor.Shape{2}, []int64{-1, 9}},
		{"I32", Tensor{Name: "i", DType: I32, Shape: []int{1}, Data: []byte{0xfe, 0xff, 0xff, 0xff}}, tensor.Int32, tensor.Shape{1}, []int32{-2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := tt.tensor.Dense(tt.dt)
			if err != nil {
				t.Fatal(err)
			}
			if d.Dtype() != tt.dt || !d.Shape().Eq(tt.shape) || !reflect.DeepEqual(d.Data(), tt.want) {
				t.Errorf("got %v %v %v, want %v %v %v", d.Dtype(), d.Shape(), d.Data(), tt.dt, tt.shape, tt.want)
			}
		})
	}
}

func TestTensorDenseErrors(t *testing.T) {
	tests := []struct {
		name   string
		tensor Tensor
		dt     tensor.Dtype
		want   string
	}{
		{"int as float", Tensor{Name: "i", DType: I64, Shape: []int{1}, Data: seq(8)}, tensor.Float32, `safetensors: tensor "i": dtype I64 is not a float type`},
		{"float as int", Tensor{Name: "f", DType: F32, Shape: []int{1}, Data: seq(4)}, tensor.Int64, `safetensors: tensor "f": dtype F32, want I64`},
		{"I64 as int32", Tensor{Name: "i", DType: I64, Shape: []int{1}, Data: seq(8)}, tensor.Int32, `safetensors: tensor "i": dtype I64, want I32`},
		{"unsupported target", Tensor{Name: "b", DType: BOOL, Shape: []int{1}, Data: seq(1)}, tensor.Bool, `safetensors: tensor "b": no conversion to bool`},
		{"no elements", Tensor{Name: "e", DType: F32, Shape: []int{0, 2}, Data: nil}, tensor.Float32, `safetensors: tensor "e": shape [0 2] has no elements`},
		{"wrong length", Tensor{Name: "w", DType: F32, Shape: []int{2}, Data: seq(4)}, tensor.Float64, `safetensors: tensor "w": has 4 bytes`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := tt.tensor.Dense(tt.dt)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Dense = %v, %v; want error containing %q", d, err, tt.want)
			}
		})
	}
}

func TestFileDense(t *testing.T) {
	f := fileOf([]Tensor{{Name: "w", DType: F32, Shape: []int{1}, Data: le32(4)}}, nil)
	if d, err := f.Dense("w", tensor.Float64); err != nil || d.Data().([]float64)[0] != 4 {
		t.Errorf("Dense(w) = %v, %v", d, err)
	}
	if _, err := f.Dense("v", tensor.Float64); err == nil || !strings.Contains(err.Error(), `safetensors: no tensor "v"`) {
		t.Errorf("Dense(v) error %v, want one about the missing tensor", err)
	}
}

func TestFromDense(t *testing.T) {
	transposed := tensor.New(tensor.WithShape(2, 3), tensor.WithBacking([]float64{1, 2, 3, 4, 5, 6}))
	if err := transposed.T(); err != nil {
		t.Fatal(err)
	}
	full := tensor.New(tensor.WithShape(3, 3), tensor.WithBacking([]float32{1, 2, 3, 4, 5, 6, 7, 8, 9}))
	columns, err := full.Slice(nil, tensor.S(1, 3))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := full.Slice(tensor.S(1, 3))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		dense *tensor.Dense
		want  Tensor
	}{
		{"float32 matrix", tensor.New(tensor.WithShape(2, 1), tensor.WithBacking([]float32{1.5, -2})),
			Tensor{Name: "x", DType: F32, Shape: []int{2, 1}, Data: le32(1.5, -2)}},
		{"float64 vector", tensor.New(tensor.WithShape(2), tensor.WithBacking([]float64{0.1, 3})),
			Tensor{Name: "x", DType: F64, Shape: []int{2}, Data: le64(0.1, 3)}},
		{"int64", tensor.New(tensor.WithShape(1), tensor.WithBacking([]int64{-1})),
			Tensor{Name: "x", DType: I64, Shape: []int{1}, Data: bytes.Repeat([]byte{0xff}, 8)}},
		{"int32", tensor.New(tensor.WithShape(1), tensor.WithBacking([]int32{258})),
			Tensor{Name: "x", DType: I32, Shape: []int{1}, Data: []byte{2, 1, 0, 0}}},
		{"scalar", tensor.New(tensor.FromScalar(float32(2))),
			Tensor{Name: "x", DType: F32, Shape: []int{}, Data: le32(2)}},
		{"transposed", transposed,
			Tensor{Name: "x", DType: F64, Shape: []int{3, 2}, Data: le64(1, 4, 2, 5, 3, 6)}},
		{"column slice", columns.(*tensor.Dense),
			Tensor{Name: "x", DType: F32, Shape: []int{3, 2}, Data: le32(2, 3, 5, 6, 8, 9)}},
		{"row slice", rows.(*tensor.Dense),
			Tensor{Name: "x", DType: F32, Shape: []int{2, 3}, Data: le32(4, 5, 6, 7, 8, 9)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FromDense("x", tt.dense)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("FromDense = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestFromDenseErrors(t *testing.T) {
	tests := []struct {
		name  string
		dense *tensor.Dense
		want  string
	}{
		{"nil", nil, `safetensors: tensor "x": nil`},
		{"unsupported dtype", tensor.New(tensor.WithShape(1), tensor.WithBacking([]uint8{1})), `safetensors: tensor "x": unsupported dtype uint8`},
		{"column-major", tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float32{1, 2, 3, 4}), tensor.AsFortran(nil)), `safetensors: tensor "x": column-major`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FromDense("x", tt.dense)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("FromDense = %+v, %v; want error containing %q", got, err, tt.want)
			}
		})
	}
}

func TestDenseRoundTrip(t *testing.T) {
	in := tensor.New(tensor.WithShape(2, 2, 2), tensor.WithBacking([]float32{1, -2, 3.5, 4, 0, 6, 7e-8, 8e30}))
	st, err := FromDense("w", in)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Encode(&buf, []Tensor{st}, nil); err != nil {
		t.Fatal(err)
	}
	f, err := Decode(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	out, err := f.Dense("w", tensor.Float32)
	if err != nil {
		t.Fatal(err)
	}
	if !out.Shape().Eq(in.Shape()) || !reflect.DeepEqual(out.Data(), in.Data()) {
		t.Errorf("round trip gave %v %v, want %v %v", out.Shape(), out.Data(), in.Shape(), in.Data())
	}
}
