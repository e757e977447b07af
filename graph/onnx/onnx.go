// Package onnx writes graphs of package graph as ONNX models: Export walks
// a scope's graph from the outputs asked for (graph.ExportONNX), each op
// writing its own ONNX form (graph.Op.ONNX), and this package turns what
// they write into an ONNX ModelProto, the protobuf of ONNX's own
// onnx.proto (package internal/onnxpb, generated from it). It is a backend
// beside graph, as graph/cuda is: it imports graph, and graph knows
// nothing of it.
//
// Models are of IR version IRVersion and ONNX's default operator set of
// version graph.ONNXOpset, which ONNX Runtime 1.30 runs and ONNX 1.12's
// checker accepts. Their shapes are fixed: those the graph was built with.
package onnx

import (
	"encoding/binary"
	"maps"
	"math"
	"slices"

	"github.com/pkg/errors"
	"google.golang.org/protobuf/proto"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/transformer-go/transformer/graph"
	pb "github.com/transformer-go/transformer/graph/onnx/internal/onnxpb"
)

// IRVersion is the ONNX IR version of the models Export writes (ONNX
// 1.12's, of opset 17).
const IRVersion = 8

// Producer names this project in the models it writes.
const Producer = "transformer-go"

// Options describe the model Export writes.
type Options struct {
	// Name names the graph; Doc describes the model.
	Name, Doc string
	// Meta is written as the model's metadata_props, read by ONNX Runtime's
	// InferenceSession (a model's config, its vocabulary's fingerprint).
	Meta map[string]string
}

// Export returns the ONNX model, serialized, that computes the named
// outputs of the graph of s from its inputs (see graph.ExportONNX), with
// the parameters' values as initializers. A graph that holds an op without
// an ONNX form is refused, naming the op, before anything is written.
func Export(s *graph.Scope, outputs map[string]*G.Node, o Options) ([]byte, error) {
	w := &writer{g: &pb.GraphProto{Name: proto.String(o.Name)}, defined: map[string]bool{}}
	if err := graph.ExportONNX(s, outputs, w); err != nil {
		return nil, err
	}
	m := &pb.ModelProto{
		IrVersion:    proto.Int64(IRVersion),
		OpsetImport:  []*pb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(graph.ONNXOpset)}},
		ProducerName: proto.String(Producer),
		DocString:    proto.String(o.Doc),
		Graph:        w.g,
	}
	for _, k := range slices.Sorted(maps.Keys(o.Meta)) {
		m.MetadataProps = append(m.MetadataProps, &pb.StringStringEntryProto{Key: proto.String(k), Value: proto.String(o.Meta[k])})
	}
	if size := proto.Size(m); size > math.MaxInt32 {
		return nil, errors.Errorf("the ONNX model %s would take %d bytes, more than protobuf's 2 GiB (models with external data are not written)", o.Name, size)
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	return b, errors.Wrapf(err, "serializing the ONNX model %s", o.Name)
}

// writer builds a GraphProto: a graph.ONNXWriter. It refuses a node that
// reads a value not yet written and a value written twice, naming them,
// so that a form's mistake is found here rather than by ONNX Runtime.
type writer struct {
	g       *pb.GraphProto
	defined map[string]bool
}

// define records name as written, refusing it if it was already.
func (w *writer) define(name string) error {
	if name == "" || w.defined[name] {
		return errors.Errorf("value %q is written twice or has no name", name)
	}
	w.defined[name] = true
	return nil
}

// Input implements graph.ONNXWriter.
func (w *writer) Input(v graph.ONNXValue) error {
	info, err := valueInfo(v)
	if err == nil {
		err = w.define(v.Name)
	}
	if err != nil {
		return errors.Wrapf(err, "input %s", v.Name)
	}
	w.g.Input = append(w.g.Input, info)
	return nil
}

// Output implements graph.ONNXWriter.
func (w *writer) Output(v graph.ONNXValue) error {
	info, err := valueInfo(v)
	if err == nil && !w.defined[v.Name] {
		err = errors.New("no node writes it")
	}
	if err != nil {
		return errors.Wrapf(err, "output %s", v.Name)
	}
	w.g.Output = append(w.g.Output, info)
	return nil
}

// Initializer implements graph.ONNXWriter.
func (w *writer) Initializer(name string, t *tensor.Dense) error {
	tp, err := tensorProto(name, t)
	if err == nil {
		err = w.define(name)
	}
	if err != nil {
		return errors.Wrapf(err, "constant %s", name)
	}
	w.g.Initializer = append(w.g.Initializer, tp)
	return nil
}

// Node implements graph.ONNXWriter.
func (w *writer) Node(op string, in, out []string, attrs map[string]any) error {
	for _, v := range in {
		if v != "" && !w.defined[v] {
			return errors.Errorf("it reads %q, which no earlier node writes", v)
		}
	}
	if len(out) == 0 {
		return errors.New("it writes nothing")
	}
	n := &pb.NodeProto{OpType: proto.String(op), Name: proto.String(out[0]), Input: in, Output: out}
	for _, k := range slices.Sorted(maps.Keys(attrs)) {
		a, err := attribute(k, attrs[k])
		if err != nil {
			return err
		}
		n.Attribute = append(n.Attribute, a)
	}
	for _, v := range out {
		if err := w.define(v); err != nil {
			return err
		}
	}
	w.g.Node = append(w.g.Node, n)
	return nil
}

// attribute is the attribute name of value v: an int, []int, float64 or
// string.
func attribute(name string, v any) (*pb.AttributeProto, error) {
	a := &pb.AttributeProto{Name: proto.String(name)}
	switch v := v.(type) {
	case int:
		a.Type, a.I = pb.AttributeProto_INT.Enum(), proto.Int64(int64(v))
	case []int:
		a.Type = pb.AttributeProto_INTS.Enum()
		for _, i := range v {
			a.Ints = append(a.Ints, int64(i))
		}
	case float64:
		a.Type, a.F = pb.AttributeProto_FLOAT.Enum(), proto.Float32(float32(v))
	case string:
		a.Type, a.S = pb.AttributeProto_STRING.Enum(), []byte(v)
	default:
		return nil, errors.Errorf("attribute %s is a %T, want an int, []int, float64 or string", name, v)
	}
	return a, nil
}

// elemType is ONNX's element type of dt (graph.ONNXElemType).
func elemType(dt tensor.Dtype) (pb.TensorProto_DataType, error) {
	et, err := graph.ONNXElemType(dt)
	return pb.TensorProto_DataType(et), err
}

// valueInfo describes the value v: its element type and fixed shape.
func valueInfo(v graph.ONNXValue) (*pb.ValueInfoProto, error) {
	et, err := elemType(v.Dtype)
	if err != nil {
		return nil, err
	}
	shape := &pb.TensorShapeProto{}
	for _, d := range v.Shape {
		shape.Dim = append(shape.Dim, &pb.TensorShapeProto_Dimension{Value: &pb.TensorShapeProto_Dimension_DimValue{DimValue: int64(d)}})
	}
	return &pb.ValueInfoProto{
		Name: proto.String(v.Name),
		Type: &pb.TypeProto{Value: &pb.TypeProto_TensorType{TensorType: &pb.TypeProto_Tensor{ElemType: proto.Int32(int32(et)), Shape: shape}}},
	}, nil
}

// tensorProto is t as the constant name, its elements little-endian in
// raw_data.
func tensorProto(name string, t *tensor.Dense) (*pb.TensorProto, error) {
	et, err := elemType(t.Dtype())
	if err != nil {
		return nil, err
	}
	if t.IsView() {
		t = t.Materialize().(*tensor.Dense)
	}
	tp := &pb.TensorProto{Name: proto.String(name), DataType: proto.Int32(int32(et))}
	for _, d := range t.Shape() {
		tp.Dims = append(tp.Dims, int64(d))
	}
	if t.IsScalar() {
		tp.Dims = nil
	}
	tp.RawData = rawData(t)
	return tp, nil
}

// rawData is t's elements, little-endian: float32, float64 or int64.
func rawData(t *tensor.Dense) []byte {
	var raw []byte
	switch d := t.Data().(type) {
	case []float32:
		for _, v := range d {
			raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(v))
		}
	case []float64:
		for _, v := range d {
			raw = binary.LittleEndian.AppendUint64(raw, math.Float64bits(v))
		}
	case []int:
		for _, v := range d {
			raw = binary.LittleEndian.AppendUint64(raw, uint64(int64(v)))
		}
	case []int64:
		for _, v := range d {
			raw = binary.LittleEndian.AppendUint64(raw, uint64(v))
		}
	case float32:
		raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(d))
	case float64:
		raw = binary.LittleEndian.AppendUint64(raw, math.Float64bits(d))
	case int:
		raw = binary.LittleEndian.AppendUint64(raw, uint64(int64(d)))
	}
	return raw
}
