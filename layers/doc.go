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
// An incremental decoder runs the decoder one position at a time:
// Decoder.Memory projects the encoder's output once, and Decoder.Step decodes
// a new position against each layer's cache of the earlier positions' keys
// and values (MultiHeadAttention.Cached).
//
// Beyond the paper: Rotary (RoPE), SwiGLU and GroupedQueryAttention (multi-query
// attention as one key/value head, with Cached for incremental decoding), each
// built from graph.Scope's general tensor ops and checked against PyTorch.
//
// Tensors are written with their shapes in comments: x [batch, len, dModel].
package layers
