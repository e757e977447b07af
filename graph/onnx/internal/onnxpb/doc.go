// Package onnxpb is the Go code of ONNX's own onnx.proto, the protobuf
// messages of an ONNX model (ModelProto, GraphProto, NodeProto,
// TensorProto, …), for package graph/onnx to write models with
// google.golang.org/protobuf.
//
// onnx.proto is copied unchanged from Debian's python3-onnx 1.12.0
// (/usr/lib/python3/dist-packages/onnx/onnx.proto, SHA-256
// a96f50c0fe1ff9180b6025843d4f7efcf53b024c83db55a36cd24a1e44345182: IR
// version 8, opset 17) and onnx.pb.go is generated from it by protoc
// 3.21.12 (Debian's protobuf-compiler) with protoc-gen-go v1.36.11
// (go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.11):
// go generate in this folder regenerates it.
package onnxpb

//go:generate protoc --go_out=. --go_opt=paths=source_relative --go_opt=Monnx.proto=github.com/transformer-go/transformer/graph/onnx/internal/onnxpb onnx.proto
