package cuda

import (
	"fmt"

	"github.com/pkg/errors"

	"github.com/transformer-go/transformer/graph"
)

// cuBLAS constants (cublas_api.h, library_types.h).
const (
	cublasOpN         = 0
	cublasOpT         = 1
	cublasDefaultMath = 0 // no TF32: float32 products stay float32
	cudaR32F          = 0
	cudaR16BF         = 14
	cublasCompute32F  = 68
	cublasGemmDefault = -1
)

// cublasStatusNames are the names of cublasStatus_t's values.
var cublasStatusNames = map[int32]string{
	1: "CUBLAS_STATUS_NOT_INITIALIZED", 3: "CUBLAS_STATUS_ALLOC_FAILED", 7: "CUBLAS_STATUS_INVALID_VALUE",
	8: "CUBLAS_STATUS_ARCH_MISMATCH", 11: "CUBLAS_STATUS_MAPPING_ERROR", 13: "CUBLAS_STATUS_EXECUTION_FAILED",
	14: "CUBLAS_STATUS_INTERNAL_ERROR", 15: "CUBLAS_STATUS_NOT_SUPPORTED", 16: "CUBLAS_STATUS_LICENSE_ERROR",
}

// cublas is the part of cuBLAS the device uses: products one at a time,
// strided-batched, and batched from tables of addresses, each in float32
// or with bfloat16 inputs (the Ex entry points), on the device's stream
// with a workspace of its own (which graph capture needs).
type cublas struct {
	lib           *library
	create        func(h *uintptr) int32
	destroy       func(h uintptr) int32
	setMathMode   func(h uintptr, mode int32) int32
	setStream     func(h uintptr, stream uintptr) int32
	setWorkspace  func(h uintptr, p graph.DevicePtr, bytes uintptr) int32
	sgemm         func(h uintptr, ta, tb, m, n, k int32, alpha *float32, a graph.DevicePtr, lda int32, b graph.DevicePtr, ldb int32, beta *float32, c graph.DevicePtr, ldc int32) int32
	gemmEx        func(h uintptr, ta, tb, m, n, k int32, alpha *float32, a graph.DevicePtr, at, lda int32, b graph.DevicePtr, bt, ldb int32, beta *float32, c graph.DevicePtr, ct, ldc, compute, algo int32) int32
	sgemmStrided  func(h uintptr, ta, tb, m, n, k int32, alpha *float32, a graph.DevicePtr, lda int32, sa int64, b graph.DevicePtr, ldb int32, sb int64, beta *float32, c graph.DevicePtr, ldc int32, sc int64, batch int32) int32
	gemmStridedEx func(h uintptr, ta, tb, m, n, k int32, alpha *float32, a graph.DevicePtr, at, lda int32, sa int64, b graph.DevicePtr, bt, ldb int32, sb int64, beta *float32, c graph.DevicePtr, ct, ldc int32, sc int64, batch, compute, algo int32) int32
	gemmBatchedEx func(h uintptr, ta, tb, m, n, k int32, alpha *float32, a graph.DevicePtr, at, lda int32, b graph.DevicePtr, bt, ldb int32, beta *float32, c graph.DevicePtr, ct, ldc int32, batch, compute, algo int32) int32
	alpha, beta   float32
}

// loadCublas opens the first of libs and binds cuBLAS; it calls nothing yet.
func loadCublas(libs []string) (*cublas, error) {
	lib, err := openLibrary("cuBLAS (libcublas.so.13, .12 or .11, from the CUDA toolkit or PyTorch's nvidia-cublas wheel)", libs)
	if err != nil {
		return nil, err
	}
	c := &cublas{lib: lib}
	err = lib.bind(map[string]any{
		"cublasCreate_v2": &c.create, "cublasDestroy_v2": &c.destroy, "cublasSetMathMode": &c.setMathMode,
		"cublasSetStream_v2": &c.setStream, "cublasSetWorkspace_v2": &c.setWorkspace,
		"cublasSgemm_v2": &c.sgemm, "cublasGemmEx": &c.gemmEx,
		"cublasSgemmStridedBatched": &c.sgemmStrided, "cublasGemmStridedBatchedEx": &c.gemmStridedEx,
		"cublasGemmBatchedEx": &c.gemmBatchedEx,
	})
	return c, errors.Wrap(err, "cuBLAS")
}

// check is nil for CUBLAS_STATUS_SUCCESS, else an error naming call and status.
func (c *cublas) check(call string, s int32) error {
	if s == 0 {
		return nil
	}
	name, ok := cublasStatusNames[s]
	if !ok {
		name = fmt.Sprintf("cublasStatus_t %d", s)
	}
	return errors.Errorf("%s: %s (%d)", call, name, s)
}

// gemm runs g (checked) on handle h. cuBLAS is column-major: the row-major
// C = op(A)·op(B) is the column-major Cᵀ = op(B)ᵀ·op(A)ᵀ, and a row-major
// matrix read column-major is its transpose, so the operands swap and keep
// their transposition flags. Products of two levels run from g's table of
// addresses (A's, B's, C's), swapped likewise.
func (c *cublas) gemm(h uintptr, g *graph.DeviceGEMM) error {
	ta, tb := int32(cublasOpN), int32(cublasOpN)
	if g.TransA {
		ta = cublasOpT
	}
	if g.TransB {
		tb = cublasOpT
	}
	m, n, k := int32(g.N), int32(g.M), int32(g.K)
	lda, ldb, ldc := int32(g.LDB), int32(g.LDA), int32(g.LDC)
	c.alpha, c.beta = g.Alpha, g.Beta
	in := int32(cudaR32F)
	if g.BF16 {
		in = cudaR16BF
	}
	if g.Outer > 1 {
		count := g.Batch * g.Outer
		tA, tB, tC := g.Table, g.Table.Add(8*count), g.Table.Add(16*count)
		return c.check("cublasGemmBatchedEx", c.gemmBatchedEx(h, tb, ta, m, n, k, &c.alpha, tB, in, lda, tA, in, ldb,
			&c.beta, tC, cudaR32F, ldc, int32(count), cublasCompute32F, cublasGemmDefault))
	}
	switch {
	case g.BF16 && g.Batch == 1:
		return c.check("cublasGemmEx", c.gemmEx(h, tb, ta, m, n, k, &c.alpha, g.B, in, lda, g.A, in, ldb,
			&c.beta, g.C, cudaR32F, ldc, cublasCompute32F, cublasGemmDefault))
	case g.BF16:
		return c.check("cublasGemmStridedBatchedEx", c.gemmStridedEx(h, tb, ta, m, n, k, &c.alpha,
			g.B, in, lda, int64(g.StrideB), g.A, in, ldb, int64(g.StrideA),
			&c.beta, g.C, cudaR32F, ldc, int64(g.StrideC), int32(g.Batch), cublasCompute32F, cublasGemmDefault))
	case g.Batch == 1:
		return c.check("cublasSgemm_v2", c.sgemm(h, tb, ta, m, n, k, &c.alpha, g.B, lda, g.A, ldb, &c.beta, g.C, ldc))
	}
	return c.check("cublasSgemmStridedBatched", c.sgemmStrided(h, tb, ta, m, n, k, &c.alpha,
		g.B, lda, int64(g.StrideB), g.A, ldb, int64(g.StrideA), &c.beta, g.C, ldc, int64(g.StrideC), int32(g.Batch)))
}
