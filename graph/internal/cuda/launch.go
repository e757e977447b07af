package cuda

// The launch shapes the kernels are written for (see each .cu file).
const (
	elemBlock = 256     // threads per block of an elementwise kernel
	maxGrid   = 1 << 16 // blocks at most; the kernels' loops stride the grid
)

// Elems launches an elementwise kernel (one whose loop runs over n
// elements, for_each_elem) with blocks of 256 threads, enough of them for
// one element per thread up to 65536 blocks.
func Elems(d Device, kernel string, n int, args ...any) error {
	grid := min(max((n+elemBlock-1)/elemBlock, 1), maxGrid)
	return d.Launch(kernel, Dim3{X: grid}, Dim3{X: elemBlock}, args...)
}

// Rows launches a row kernel (for_each_row: a block per row, reducing over
// its cols) with one block per row up to 65536, of the least power of two
// threads from 32 to 256 that covers a row.
func Rows(d Device, kernel string, rows, cols int, args ...any) error {
	block := 32
	for block < cols && block < elemBlock {
		block *= 2
	}
	return d.Launch(kernel, Dim3{X: min(max(rows, 1), maxGrid)}, Dim3{X: block}, args...)
}
