// Package graph builds, differentiates and runs expression graphs: a
// runtime any model could use, on Gorgonia.
//
// What is Gorgonia's: the expression graph (G.ExprGraph and its *G.Node),
// symbolic differentiation (G.Grad, which calls each op's gradient) and the
// machine that runs a graph's nodes in order (G.TapeMachine). What is this
// package's: the Scope that builds a graph, the parameter store (Params) and
// its safetensors checkpoints, the Runtime programs run on (device,
// precision, memory), compiled Programs with their arena, the Op type and
// the general ops defined with it (products, softmax, norms, embedding,
// dropout, elementwise math, shapes, reductions) with their kernels, and the
// gradient checker. The Transformer's own ops (the heads' split and merge,
// positions, the key/value cache's slot, the label-smoothed loss, target
// scores) live above it in package layers/ops, written against this
// package's public API as a user's ops would be.
//
// A Scope is a place in a graph under construction: the graph, the parameter
// store (Params), a name prefix and the train/eval mode. Layers take a Scope,
// make their parameters in a child scope (In) and add nodes with its op
// methods, which record the first error and return nil from then on, so that
// a layer reads like its equations and Err says once what went wrong, and
// where:
//
//	h := s.SiLU(s.MatMul(x, w, true))     // x: [batch, len, dModel]
//	y := s.Mul(h, s.Sigmoid(gate))        // broadcasting, as NumPy
//	if err := s.Err(); err != nil { … }
//
// The op methods cover the products and normalizations models are made of
// (MatMul, Affine — a product and its bias in one op —, AffineReLU — and a
// ReLU after them —, Softmax with masks, LogSoftmax, Normalize and LayerNorm,
// Embed, Dropout) and general tensor math: Add, Sub, Mul and Div with broadcasting; Reshape,
// Transpose, Slice and Concat; Exp, Log, Sqrt, Tanh, Sigmoid, SiLU, GELU and
// ReLU; Sum, Mean and Max over an axis; a BatchedMatMul whose batch axes
// broadcast. Constants (Scalar, Constant) take the graph's element type; a
// node of another float type is an error when the graph is built, not when it
// runs.
//
// # Ops
//
// Every op is an Op value: a name, a shape rule, float32 and float64 forward
// and backward kernels, and the inputs it is differentiable with respect to.
// Op.Apply (or Scope.Apply) adds it to a graph, where Gorgonia sees an Op and
// an SDOp. This package defines its own ops so, and a user's package defines
// new ones the same way (see the Op example, and package layers/ops): an op
// that checks its operands first adds its node with Scope.Record, and its
// kernels may split their rows over the cores with ParallelFor, use the row
// loops of this package's own kernels (ExpShift, RowMax, RowSum, AddRow) and
// its matrix product (Gemm, and GemmBF16 for Op.BF16; DeviceCall.Gemm on a
// device). A value the backward pass needs from the forward pass travels as a graph input
// (Op.Save, Op.SaveOutput), never through shared state. GradCheck checks an
// op's gradients against finite differences, and its float32 kernels against
// its float64 ones. An op's ONNX form (Op.ONNX, an ONNXForm written with an
// ONNXBuilder) sits beside its kernels: ExportONNX walks a scope's graph
// from the outputs asked for and writes every op in its form to an
// ONNXWriter (package graph/onnx makes the ONNX model), refusing, by name,
// an op that declares none (the gradients' and dropout's).
//
// # Programs
//
// Compile turns a built graph into a Program (a TapeMachine, with the loss's
// symbolic gradient), whose inputs are set by name and which Run runs. When
// it is compiled, a program lays out every op's output in the arena of its
// Runtime, from the order in which its machine will run the graph's
// nodes, sharing memory between outputs no step needs together: runs
// allocate nothing, even the first, and a program per batch shape costs the
// memory of the largest.
//
// A program differentiates its loss with respect to every parameter, and
// with respect to the inputs and marked nodes that the scope's GradWRT
// option names (Scope.Differentiable marks a node, such as a model's
// source embeddings; Program.InputGrad reads the gradient): saliency maps,
// probing. Eval builds, runs and reads a small graph in one call, for
// notebooks and tests.
//
// A Runtime is where and how programs run, chosen when one is compiled and
// apart from the parameter store (Params, which only stores): the device
// (NewRuntime opens it first, so that a missing GPU is an error before any
// work), the precision of the products and the memory the programs share.
// With BF16, the matrix products round their operands to bfloat16 and sum
// in float32 (an op's Op.BF16 kernels), and everything else stays in the
// graph's type. One graph, one op set and one checkpoint serve every
// runtime. Runtime.Adam updates parameters wherever their gradients lie
// (Gradients: a program's own, or GradSums).
//
// # Devices
//
// A device other than the CPU is a Backend that a package registers
// (RegisterBackend; graph/cuda registers the GPU as DeviceCUDA). An op's
// device kernels (Op.Device) launch the kernels of a DeviceModule, CUDA C
// and its PTX that the op's package registers (this package's own are
// module "graph", in kernels/), by handle, and run products (DeviceCall).
// A program on a device runs its tape once, recording what its kernels
// launch, and replays the recording at later runs (a CUDA graph on a GPU;
// Runtime.SetReplays); what changes between runs reaches the device through
// memory: inputs, parameters' new versions, per-run words
// (DeviceCall.PerRun).
//
// # Cores
//
// Kernels split their work over GOMAXPROCS goroutines when there is enough
// of it (matrix products into bands, row and elementwise loops into ranges
// of rows, reductions into ranges of columns, dropout masks into blocks drawn
// from their own seeded streams), on one pool of helper goroutines that the
// calling goroutine works beside. How the work is split never changes a
// result: a program computes the same bits at any GOMAXPROCS.
package graph
