// Package layers holds the building blocks of the Transformer of "Attention Is
// All You Need" (Vaswani et al., 2017), one idea per file.
//
// A layer is a small value made from its sizes; its Apply method adds the
// layer's nodes to a graph.Scope and returns the output node. Parameters are
// made in the scope it is given, so names come out hierarchical without anyone
// spelling them:
//
//	attn := layers.NewMultiHeadAttention(512, 8, 0.1)
//	out := attn.Apply(s.In("encoder", "layers", 0, "self_attn"), x, x, mask)
//	// parameters: encoder.layers.0.self_attn.q_proj.weight, …
//
// Sublayers plug in. An EncoderLayer or DecoderLayer holds its attention,
// feed-forward network and norm as values of the interfaces Attention, FFN
// and Norm (each left nil is the paper's), a model adds Positional
// encodings, and a Stack runs any layer N times. A Registry maps the names
// a configuration gives these variants to their constructors, so that a
// model, and a checkpoint recording the names, can be rebuilt; a program
// registers its own variants in the Registry it builds with.
//
// An incremental decoder runs a stack one position at a time:
// Decoder.Memory projects the encoder's output once, and Decoder.Step (or
// Encoder.Step, for a decoder-only stack) decodes a new position against
// each layer's cache of the earlier positions' keys and values
// (IncrementalAttention.Cached).
//
// Beyond the paper: Rotary (RoPE), SwiGLU and GroupedQueryAttention (multi-query
// attention as one key/value head, with Cached for incremental decoding), each
// built from graph.Scope's general tensor ops and checked against PyTorch.
//
// Tensors are written with their shapes in comments: x [batch, len, dModel].
package layers
