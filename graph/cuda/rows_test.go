package cuda

import (
	"fmt"
	"math/rand/v2"
)

// testGatherRows checks gather_rows_f32 with row indices that repeat and
// reorder, and without them (a copy).
func testGatherRows(e *env) {
	r := rand.New(rand.NewPCG(21, 1))
	for _, s := range [][2]int{{1, 1}, {5, 3}, {4, 300}} { // rows, size
		rows, size := s[0], s[1]
		from := make([]int32, rows)
		for i := range from {
			from[i] = int32(r.IntN(rows))
		}
		x := randn(r, rows*size, 1)
		px, pf, py := e.upload(x), e.uploadInts(from), e.alloc(rows*size)
		want, copied := make([]float64, rows*size), f64(x)
		for i := range want {
			want[i] = float64(x[int(from[i/size])*size+i%size])
		}
		what := fmt.Sprintf("gather of %d rows of %d", rows, size)
		e.launch("gather_rows_f32", 2, 64, py, px, pf, rows, size)
		near(e.t, what, e.download(py, rows*size), want, e.d.tol)
		e.launch("gather_rows_f32", 2, 64, py, px, Ptr(0), rows, size)
		near(e.t, what+" in order", e.download(py, rows*size), copied, e.d.tol)
	}
}
