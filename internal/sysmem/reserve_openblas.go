//go:build openblas

package sysmem

// blasReserve is what OpenBLAS maps beyond Go's heap, in a build with the
// openblas tag: a buffer for each of its threads (32 MB on x86-64) and its
// OpenMP threads' stacks. Decoding with it grew the address space by up to
// 130 MB more than without (model/decode's TestDecodeMemoryBoundsItsPeak).
const blasReserve = 256 << 20
