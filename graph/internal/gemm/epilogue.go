package gemm

import "github.com/transformer-go/transformer/graph/internal/vrow"

// Epilogue is the last step of a product, applied to every element of C:
//
//	C[i, j] = f(C[i, j] + Bias[j])
//
// where f is max(·, 0) (with -0 made +0) when ReLU is set, else the
// identity. A nil Bias adds nothing. The product applies it to each block
// of C as soon as the block is final, rather than in a pass of its own
// over C afterwards: the layers y = x·Wᵀ + b and y = max(0, x·Wᵀ + b) of a
// Transformer cost one GEMM and nothing more.
type Epilogue[T float] struct {
	Bias []T
	ReLU bool
}

// from is e for the columns of C from j on.
func (e Epilogue[T]) from(j int) Epilogue[T] {
	if e.Bias != nil {
		e.Bias = e.Bias[j:]
	}
	return e
}

// biasAt is the address of the bias of column j, nil without a bias.
func (e Epilogue[T]) biasAt(j int) *T {
	if e.Bias == nil {
		return nil
	}
	return &e.Bias[j]
}

// Apply applies e to the m×n matrix c with leading dimension ldc, as a
// product with e does after it: for a C computed by another GEMM.
func (e Epilogue[T]) Apply(c []T, ldc, m, n int) {
	if e.Bias == nil && !e.ReLU {
		return
	}
	switch c := any(c).(type) {
	case []float32:
		b, _ := any(e.Bias).([]float32)
		applyRows(c, ldc, m, n, b, e.ReLU, vrow.Add, vrow.ReLU)
	case []float64:
		b, _ := any(e.Bias).([]float64)
		applyRows(c, ldc, m, n, b, e.ReLU, add64, vrow.ReLU64)
	}
}

// applyRows adds bias to each row of c and then applies relu, with the row
// kernels add and relu.
func applyRows[T float](c []T, ldc, m, n int, bias []T, relu bool, add func(y, a, b []T), max0 func(y, x []T)) {
	for i := range m {
		row := c[i*ldc:][:n]
		if bias != nil {
			add(row, row, bias)
		}
		if relu {
			max0(row, row)
		}
	}
}

// add64 is the float64 row kernel y = a + b.
func add64(y, a, b []float64) {
	for j := range y {
		y[j] = a[j] + b[j]
	}
}
