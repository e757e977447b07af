package par

import (
	"runtime"
	"sync/atomic"
	"testing"
)

// withProcs runs f with GOMAXPROCS set to n.
func withProcs(t *testing.T, n int, f func()) {
	t.Helper()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(n))
	f()
}

func TestDoCallsEachPartOnce(t *testing.T) {
	for _, procs := range []int{1, 2, 3, 8} {
		withProcs(t, procs, func() {
			for _, parts := range []int{0, 1, 2, 5, 64, 1000} {
				for range 20 {
					calls := make([]atomic.Int32, parts)
					Do(parts, func(i int) { calls[i].Add(1) })
					for i := range calls {
						if n := calls[i].Load(); n != 1 {
							t.Fatalf("GOMAXPROCS %d, %d parts: part %d ran %d times", procs, parts, i, n)
						}
					}
				}
			}
		})
	}
}

func TestForCoversTheRange(t *testing.T) {
	for _, procs := range []int{1, 2, 4} {
		withProcs(t, procs, func() {
			for _, c := range []struct{ n, grain int }{
				{0, 1}, {1, 1}, {7, 1}, {7, 3}, {100, 10}, {100, 60}, {1000, 1}, {5, 0},
			} {
				seen := make([]atomic.Int32, c.n)
				var ranges atomic.Int32
				For(c.n, c.grain, func(lo, hi int) {
					if hi <= lo || lo < 0 || hi > c.n {
						t.Errorf("n %d, grain %d: range [%d, %d)", c.n, c.grain, lo, hi)
						return
					}
					if hi-lo < c.grain && hi != c.n {
						t.Errorf("n %d, grain %d: range [%d, %d) shorter than the grain", c.n, c.grain, lo, hi)
					}
					ranges.Add(1)
					for i := lo; i < hi; i++ {
						seen[i].Add(1)
					}
				})
				for i := range seen {
					if n := seen[i].Load(); n != 1 {
						t.Fatalf("GOMAXPROCS %d, n %d, grain %d: index %d covered %d times", procs, c.n, c.grain, i, n)
					}
				}
				if r := int(ranges.Load()); c.n >= 2*max(c.grain, 1) && procs > 1 && r < 2 {
					t.Errorf("GOMAXPROCS %d, n %d, grain %d: %d range, want the work split", procs, c.n, c.grain, r)
				}
			}
		})
	}
}

// TestNested checks that a part may itself run Do (a batched product of
// large matrices), without deadlock and covering everything.
func TestNested(t *testing.T) {
	withProcs(t, 4, func() {
		var total atomic.Int64
		Do(8, func(int) {
			Do(16, func(i int) { total.Add(int64(i)) })
		})
		if got, want := total.Load(), int64(8*(15*16/2)); got != want {
			t.Fatalf("nested sums %d, want %d", got, want)
		}
	})
}

// BenchmarkDo times handing two parts of negligible work to a helper and
// back: the overhead a parallel kernel pays. It loops b.N times, not with
// b.Loop, so that -cpu sets its GOMAXPROCS (see gemm's benchSgemm).
func BenchmarkDo(b *testing.B) {
	var sink atomic.Int64
	for range b.N {
		Do(2, func(i int) { sink.Add(int64(i)) })
	}
}
