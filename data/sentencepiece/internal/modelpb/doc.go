// Package modelpb is SentencePiece's ModelProto (the .model file), in code
// generated from SentencePiece's own sentencepiece_model.proto.
//
// The .proto is SentencePiece 0.1.97's, unchanged: src/sentencepiece_model.proto
// of Debian's source package sentencepiece 0.1.97-3 (from
// sentencepiece_0.1.97.orig.tar.gz, which Debian's patches leave as it is;
// SHA-256 ddf0b709004087fab3bba174fcfb6cb17715e37df11d1d609cfe1b30ba22953e),
// the version of Debian's spm_train, spm_encode and python3-sentencepiece.
// sentencepiece_model.pb.go is generated from it by protoc 3.21.12 (Debian's
// protobuf-compiler) and protoc-gen-go v1.36.11
// (go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.11), with
// the command below, run in this directory.
package modelpb

//go:generate protoc --go_out=. --go_opt=paths=source_relative --go_opt=Msentencepiece_model.proto=github.com/transformer-go/transformer/data/sentencepiece/internal/modelpb sentencepiece_model.proto
