// Package layers holds the building blocks of the Transformer of "Attention Is
// All You Need" (Vaswani et al., 2017), one idea per file.
//
// A layer is a small value made from its sizes; its Apply method adds the
// layer's nodes to a graph.Scope and returns the output node. Parameters are
// made in the scope it is given, so names come out hierarchical without anyone
// spelling them:
//
//	attn := layers.NewMultiHeadAttention(512, 8, 0.1)
//	out := attn.Apply(s.In("encoder", "layers", 0, "self_attn"), x, x, mask, nil)
//	// parameters: encoder.layers.0.self_attn.q_proj.weight, …
//
// Sublayers plug in. A Layer (an encoder layer, or with Cross a decoder
// layer) holds its attention, feed-forward network and norm as values of
// the interfaces Attention, FFN and Norm (each left nil is the paper's), a
// model adds Positional encodings, and a Stack runs its layer N times. A
// Registry maps the names a configuration gives these variants to their
// constructors and the options each declares (Option), so that a model,
// and a checkpoint recording the names and options, can be rebuilt; a
// program registers its own variants in the Registry it builds with.
//
// There is one forward pass, and one attention body
// (ScaledDotProductAttention). An incremental decoder runs the same Apply
// one position at a time, given a Cache per attention that the attention
// declares (Stack.Caches) and a Carrier carries from step to step: the
// keys and values of the earlier positions and the new position's Slot
// (Stack.Memory projects the encoder's output for cross-attention once).
//
// Beyond the paper, as options of the one MultiHeadAttention: key/value
// heads shared by groups of query heads (grouped-query and multi-query
// attention), Rotary positions (RoPE) and a PositionBias (ALiBi, a
// SlidingWindow); and the SwiGLU feed-forward network. Each is built from graph.Scope's general
// tensor ops and checked against PyTorch.
//
// Tensors are written with their shapes in comments: x [batch, len, dModel].
package layers
