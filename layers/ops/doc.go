// Package ops holds the Transformer's own ops, above the general ones of
// package graph: the heads' split and merge (SplitHeads, MergeHeads),
// attention's per-head products (HeadScores, HeadMix), positions added to
// a batch of sequences (AddPositions), the slot an incremental decoder
// writes into its key/value cache (SetSlot), the label-smoothed
// cross-entropy (SmoothedCrossEntropy and, from logits,
// SmoothedCrossEntropyLogits), the targets' scores for evaluation
// (TargetScores), and the attention masks made from token ids
// (PaddingMask, CausalMask).
//
// They use graph's public API alone, as an op of any model's module would:
// each is a graph.Op with its graph.Kernels per element type, reading and
// writing graph.Operand values, its kernels' row loops split over the
// cores by graph.ParallelFor and vectorized by graph.ExpShift, RowMax,
// RowSum and AddRow, its matrix products graph.Gemm (graph.GemmBF16 in
// programs of BF16 products). On a device (graph.Op.Device) they launch
// this package's own CUDA C kernels (kernels/*.cu, with the PTX nvcc makes
// of them, `go generate`), registered as a graph.DeviceModule as any
// module's would be, and run products with graph.DeviceCall.Gemm. Each op
// that evaluation and decoding graphs hold declares its ONNX form
// (graph.Op.ONNX, onnx.go), so that graph.ExportONNX writes those graphs
// as ONNX models (package graph/onnx).
//
// Every op is a function whose first argument is the scope it adds its node
// to, and which records its error there as the Scope's own op methods do
// (graph.Scope.Record): the first error is kept (Scope.Err) and every op
// returns nil from then on, so a layer reads like its equations:
//
//	h := ops.SplitHeads(s, s.MatMul(x, w, true), heads) // [batch, len, heads·dk] → [batch, heads, len, dk]
//	loss := ops.SmoothedCrossEntropyLogits(s, logits, targets, 0.1, pad)
//
// Each op's gradients are checked against finite differences, and its
// float32 kernels against its float64 ones, by graph.GradCheck.
package ops
