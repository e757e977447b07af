//go:build mpi

package dist

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/transformer-go/transformer/internal/mpitest"
)

// TestMain is, under mpirun, each rank's side of TestCollectives: MPI is
// called from the main goroutine, as the package asks.
func TestMain(m *testing.M) {
	switch {
	case os.Getenv("OMPI_COMM_WORLD_SIZE") == "":
		os.Exit(m.Run())
	case os.Getenv(benchEnv) != "":
		os.Exit(benchMain())
	default:
		os.Exit(ranksMain())
	}
}

// ranksMain checks the collectives on this rank and prints "rank R ok" or
// what failed.
func ranksMain() int {
	w, err := Join()
	if err != nil {
		fmt.Println(err)
		return 1
	}
	defer w.Leave()
	var problems []string
	for _, check := range []func(*World) error{checkSums, checkBroadcasts, checkAgree, checkSame, checkSumsUnderGC} {
		if err := check(w); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if len(problems) > 0 {
		fmt.Printf("rank %d: %s\n", w.Rank(), strings.Join(problems, "; "))
		return 1
	}
	fmt.Printf("rank %d of %d ok\n", w.Rank(), w.Size())
	return 0
}

// value is rank r's integer-valued element i.
func value(i, r int) float64 { return float64((i*7+r*13)%2001 - 1000) }

// checkSums: integer-valued buffers (a few million elements) sum exactly.
func checkSums(w *World) error {
	const n = 3 << 20
	f32, f64 := make([]float32, n), make([]float64, n)
	for i := range n {
		f32[i], f64[i] = float32(value(i, w.Rank())), value(i, w.Rank())
	}
	if err := w.SumF32(f32); err != nil {
		return err
	}
	if err := w.SumF64(f64); err != nil {
		return err
	}
	for i := range n {
		want := 0.0
		for r := range w.Size() {
			want += value(i, r)
		}
		if float64(f32[i]) != want || f64[i] != want {
			return fmt.Errorf("sum of element %d: float32 %v, float64 %v, want %v", i, f32[i], f64[i], want)
		}
	}
	return nil
}

// checkSumsUnderGC: sums of one element, many times over, while the
// collector runs and shrinks this goroutine's grown stack. A pointer slot
// holding MPI_IN_PLACE, (void *) 1, in an all-reduce's frame stopped the
// process ("invalid pointer found on stack") when the stack was moved.
func checkSumsUnderGC(w *World) error {
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
				runtime.GC()
			}
		}
	}()
	return deepStack(64, func() error {
		f32, f64 := []float32{1}, []float64{1}
		for range 20000 {
			f32[0], f64[0] = 1, 1
			if err := w.SumF32(f32); err != nil {
				return err
			}
			if err := w.SumF64(f64); err != nil {
				return err
			}
			if f32[0] != float32(w.Size()) || f64[0] != float64(w.Size()) {
				return fmt.Errorf("sums of ones on %d ranks: %v and %v", w.Size(), f32[0], f64[0])
			}
		}
		return nil
	})
}

// deepStack grows the stack by depth frames of a kilobyte, returns, and
// calls f: the stack is then large and mostly unused, and the collector
// shrinks it.
func deepStack(depth int, f func() error) error {
	var grow func(int) byte
	grow = func(d int) byte {
		var pad [1024]byte
		pad[d%len(pad)] = byte(d)
		if d == 0 {
			return pad[0]
		}
		return grow(d-1) + pad[d%len(pad)]
	}
	grow(depth)
	return f()
}

// checkBroadcasts: every rank ends with rank 0's values.
func checkBroadcasts(w *World) error {
	f32 := []float32{float32(w.Rank()), 1.5}
	f64 := []float64{float64(w.Rank()), -2}
	if err := w.BroadcastF32(f32); err != nil {
		return err
	}
	if err := w.BroadcastF64(f64); err != nil {
		return err
	}
	b, err := w.BroadcastBytes(bytes.Repeat([]byte{byte('a' + w.Rank())}, 3+w.Rank()))
	if err != nil {
		return err
	}
	if f32[0] != 0 || f64[0] != 0 || string(b) != "aaa" {
		return fmt.Errorf("broadcast gave %v, %v, %q", f32, f64, b)
	}
	return nil
}

// checkAgree: one rank's failure is every rank's error.
func checkAgree(w *World) error {
	if err := w.Agree(nil); err != nil {
		return fmt.Errorf("Agree with no failure: %v", err)
	}
	var mine error
	if w.Rank() == w.Size()-1 {
		mine = errors.New("disk full")
	}
	if err := w.Agree(mine); err == nil {
		return fmt.Errorf("Agree with a failed rank: no error")
	}
	return nil
}

// checkSame: equal sums pass, a rank with another sum fails everyone.
func checkSame(w *World) error {
	if err := w.Same(0xfeedface12345678); err != nil {
		return fmt.Errorf("Same with equal sums: %v", err)
	}
	if err := w.Same(uint64(w.Rank()) << 40); err == nil {
		return fmt.Errorf("Same with different sums: no error")
	}
	return nil
}

// TestCollectives runs the checks on 2 ranks, over shared memory and over
// TCP on the loopback interface (the path between machines).
func TestCollectives(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, net := range []struct {
		name  string
		extra []string
	}{
		{"shared memory", nil},
		{"tcp", []string{"--mca", "btl", "self,tcp", "--mca", "btl_tcp_if_include", "lo"}},
	} {
		out, err := mpitest.Command(t, "2", net.extra, exe).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "rank 0 of 2 ok") || !strings.Contains(string(out), "rank 1 of 2 ok") {
			t.Errorf("%s: %v\n%s", net.name, err, out)
		}
	}
}

// benchEnv, set to "FLOATS TIMES", makes a rank time TIMES all-reduces of
// FLOATS float32s instead of checking the collectives.
const benchEnv = "DIST_BENCH"

// benchMain is each rank's side of BenchmarkAllReduce: it prints the median
// seconds of one all-reduce.
func benchMain() int {
	var n, times int
	if _, err := fmt.Sscan(os.Getenv(benchEnv), &n, &times); err != nil || n < 1 || times < 1 {
		fmt.Println("bad", benchEnv)
		return 1
	}
	w, err := Join()
	if err != nil {
		fmt.Println(err)
		return 1
	}
	defer w.Leave()
	buf := make([]float32, n)
	ds := make([]float64, times)
	for i := range ds {
		start := time.Now()
		if err := w.SumF32(buf); err != nil {
			fmt.Println(err)
			return 1
		}
		ds[i] = time.Since(start).Seconds()
	}
	slices.Sort(ds)
	if w.Root() {
		fmt.Printf("allreduce_s %g\n", ds[times/2])
	}
	return 0
}

// BenchmarkAllReduce times the all-reduce of one training step of the small
// preset (7.6M float32 gradients) on 2 ranks, over shared memory and over TCP
// on the loopback interface, and reports the median seconds per all-reduce
// and the bus bandwidth 2(n−1)/n·bytes/s.
func BenchmarkAllReduce(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	const floats = 7_600_000
	for _, net := range []struct {
		name  string
		extra []string
	}{
		{"vader", []string{"--mca", "btl", "self,vader"}},
		{"tcp", []string{"--mca", "btl", "self,tcp", "--mca", "btl_tcp_if_include", "lo"}},
	} {
		b.Run(net.name, func(b *testing.B) {
			cmd := mpitest.Command(b, "2", net.extra, exe)
			cmd.Env = append(cmd.Env, fmt.Sprintf("%s=%d %d", benchEnv, floats, max(b.N, 10)))
			out, err := cmd.CombinedOutput()
			var secs float64
			if i := strings.Index(string(out), "allreduce_s "); err != nil || i < 0 {
				b.Fatalf("%v\n%s", err, out)
			} else {
				fmt.Sscan(string(out[i+len("allreduce_s "):]), &secs)
			}
			b.ReportMetric(secs*1e3, "ms/allreduce")
			b.ReportMetric(2*0.5*floats*4/secs/1e9, "busGB/s")
		})
	}
}
