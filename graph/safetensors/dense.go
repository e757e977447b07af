package safetensors

import (
	"encoding/binary"
	"math"

	"github.com/pkg/errors"
	"gorgonia.org/tensor"
)

// Float32s returns the elements of t as float32 values. It converts from
// F64, F32, F16 and BF16, rounding F64 values to the nearest float32.
func (t Tensor) Float32s() ([]float32, error) {
	v, err := floats[float32](t)
	return v, errors.Wrap(err, "safetensors")
}

// Float64s returns the elements of t as float64 values. It converts exactly
// from F64, F32, F16 and BF16.
func (t Tensor) Float64s() ([]float64, error) {
	v, err := floats[float64](t)
	return v, errors.Wrap(err, "safetensors")
}

// Dense returns t as a *tensor.Dense of type dt, with its own copy of the
// data. Float32 and Float64 accept every float dtype of Float32s; Int64 and
// Int32 accept I64 and I32 respectively. Gorgonia has no tensors without
// elements, so a shape with a zero dimension is an error.
func (t Tensor) Dense(dt tensor.Dtype) (*tensor.Dense, error) {
	backing, err := t.backing(dt)
	if err != nil {
		return nil, errors.Wrap(err, "safetensors")
	}
	return tensor.New(tensor.WithShape(t.Shape...), tensor.WithBacking(backing)), nil
}

// backing returns the elements of t as a slice of dt's Go type.
func (t Tensor) backing(dt tensor.Dtype) (interface{}, error) {
	if n, err := t.NumElements(); err != nil || n == 0 {
		return nil, errors.Errorf("tensor %q: shape %v has no elements", t.Name, t.Shape)
	}
	switch dt {
	case tensor.Float32:
		return floats[float32](t)
	case tensor.Float64:
		return floats[float64](t)
	case tensor.Int64:
		return ints(t, I64, func(b []byte) int64 { return int64(binary.LittleEndian.Uint64(b)) })
	case tensor.Int32:
		return ints(t, I32, func(b []byte) int32 { return int32(binary.LittleEndian.Uint32(b)) })
	}
	return nil, errors.Errorf("tensor %q: no conversion to %v", t.Name, dt)
}

// Dense returns the tensor called name as a *tensor.Dense of type dt, as
// Tensor.Dense does.
func (f *File) Dense(name string, dt tensor.Dtype) (*tensor.Dense, error) {
	t, ok := f.Tensors[name]
	if !ok {
		return nil, errors.Errorf("safetensors: no tensor %q", name)
	}
	return t.Dense(dt)
}

// FromDense returns d as a tensor called name. Float64, Float32, Int64 and
// Int32 tensors become F64, F32, I64 and I32; views and transposed tensors
// are stored as they appear, in row-major order.
func FromDense(name string, d *tensor.Dense) (Tensor, error) {
	t, err := fromDense(name, d)
	return t, errors.Wrap(err, "safetensors")
}

// fromDense converts d without adding context to its errors.
func fromDense(name string, d *tensor.Dense) (Tensor, error) {
	if d == nil {
		return Tensor{}, errors.Errorf("tensor %q: nil *tensor.Dense", name)
	}
	if d.IsMaterializable() {
		m, ok := d.Materialize().(*tensor.Dense)
		if !ok {
			return Tensor{}, errors.Errorf("tensor %q: materialized view is not a *tensor.Dense", name)
		}
		d = m
	}
	if d.DataOrder().IsColMajor() {
		return Tensor{}, errors.Errorf("tensor %q: column-major data is not supported", name)
	}
	t := Tensor{Name: name, Shape: append([]int{}, d.Shape()...)}
	switch d.Dtype() {
	case tensor.Float64:
		t.DType, t.Data = F64, pack(values[float64](d), 8, func(b []byte, v float64) {
			binary.LittleEndian.PutUint64(b, math.Float64bits(v))
		})
	case tensor.Float32:
		t.DType, t.Data = F32, pack(values[float32](d), 4, func(b []byte, v float32) {
			binary.LittleEndian.PutUint32(b, math.Float32bits(v))
		})
	case tensor.Int64:
		t.DType, t.Data = I64, pack(values[int64](d), 8, func(b []byte, v int64) {
			binary.LittleEndian.PutUint64(b, uint64(v))
		})
	case tensor.Int32:
		t.DType, t.Data = I32, pack(values[int32](d), 4, func(b []byte, v int32) {
			binary.LittleEndian.PutUint32(b, uint32(v))
		})
	default:
		return Tensor{}, errors.Errorf("tensor %q: unsupported dtype %v", name, d.Dtype())
	}
	if err := t.check(); err != nil {
		return Tensor{}, err
	}
	return t, nil
}

// values returns the elements of d, a scalar or a row-major array of T.
func values[T any](d *tensor.Dense) []T {
	switch v := d.Data().(type) {
	case T:
		return []T{v}
	case []T:
		return v
	}
	return nil
}

// pack encodes vals with put, size bytes each.
func pack[T any](vals []T, size int, put func([]byte, T)) []byte {
	b := make([]byte, len(vals)*size)
	for i, v := range vals {
		put(b[i*size:], v)
	}
	return b
}

// floats decodes the float elements of t as T.
func floats[T float32 | float64](t Tensor) ([]T, error) {
	get := floatReader(t.DType)
	if get == nil {
		return nil, errors.Errorf("tensor %q: dtype %s is not a float type", t.Name, t.DType)
	}
	return unpack(t, func(b []byte) T { return T(get(b)) })
}

// ints decodes the elements of t, which must be of type want, with get.
func ints[T int32 | int64](t Tensor, want DType, get func([]byte) T) ([]T, error) {
	if t.DType != want {
		return nil, errors.Errorf("tensor %q: dtype %s, want %s", t.Name, t.DType, want)
	}
	return unpack(t, get)
}

// unpack checks t and decodes its elements with get.
func unpack[T any](t Tensor, get func([]byte) T) ([]T, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	size := t.DType.Size()
	out := make([]T, len(t.Data)/size)
	for i := range out {
		out[i] = get(t.Data[i*size:])
	}
	return out, nil
}

// floatReader returns the decoder of one element of the float type d, or
// nil when d is no float type.
func floatReader(d DType) func([]byte) float64 {
	switch d {
	case F64:
		return func(b []byte) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(b)) }
	case F32:
		return func(b []byte) float64 { return float64(math.Float32frombits(binary.LittleEndian.Uint32(b))) }
	case F16:
		return func(b []byte) float64 { return float64(halfToFloat32(binary.LittleEndian.Uint16(b))) }
	case BF16:
		return func(b []byte) float64 {
			return float64(math.Float32frombits(uint32(binary.LittleEndian.Uint16(b)) << 16))
		}
	}
	return nil
}

// halfToFloat32 converts the IEEE 754 half-precision value h exactly.
func halfToFloat32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // Infinity or NaN, keeping the payload.
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp == 0: // Zero or subnormal: mant * 2^-24.
		v := float32(math.Ldexp(float64(mant), -24))
		return math.Float32frombits(sign | math.Float32bits(v))
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
}
