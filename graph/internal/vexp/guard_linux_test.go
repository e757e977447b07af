package vexp

import (
	"math"
	"syscall"
	"testing"
	"unsafe"
)

// TestSoftmaxAtPageEnd runs Softmax, and SoftmaxRows on four rows, on rows
// that end where readable memory ends, before a page that faults on any
// access: the lane masks of the last vector must keep every load and store
// within the row.
func TestSoftmaxAtPageEnd(t *testing.T) {
	page := syscall.Getpagesize()
	mem, err := syscall.Mmap(-1, 0, 2*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Skipf("mmap: %v", err)
	}
	defer syscall.Munmap(mem)
	if err := syscall.Mprotect(mem[page:], syscall.PROT_NONE); err != nil {
		t.Skipf("mprotect: %v", err)
	}
	all := unsafe.Slice((*float32)(unsafe.Pointer(&mem[0])), page/4)
	for _, n := range []int{1, 3, 8, 13, 32, 37} {
		row := all[len(all)-n:]
		for j := range row {
			row[j] = float32(j)
		}
		Softmax(row, row, row, 1) // x, mask and y all at the page's end
		checkSums(t, n, row)
		rows := all[len(all)-4*n:]
		for j := range rows {
			rows[j] = float32(j % n)
		}
		SoftmaxRows(rows, rows, rows[3*n:], n, 0, 1)
		checkSums(t, n, rows)
	}
}

// checkSums checks that each row of n elements of y sums to 1.
func checkSums(t *testing.T, n int, y []float32) {
	t.Helper()
	for r := 0; r < len(y); r += n {
		var s float64
		for _, v := range y[r : r+n] {
			s += float64(v)
		}
		if math.Abs(s-1) > 1e-5 {
			t.Errorf("n %d: row %d's softmax sums to %v", n, r/n, s)
		}
	}
}
