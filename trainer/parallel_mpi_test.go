//go:build mpi

package trainer

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/transformer-go/transformer/internal/mpitest"
	"github.com/transformer-go/transformer/trainer/dist"
)

// rankWorld is this process's world when mpirun started the test binary as
// one of several ranks; nil when the test runs alone.
var rankWorld *dist.World

func TestMain(m *testing.M) {
	if os.Getenv("OMPI_COMM_WORLD_SIZE") == "" {
		os.Exit(m.Run())
	}
	w, err := dist.Join()
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	rankWorld = w
	code := m.Run()
	w.Leave()
	os.Exit(code)
}

// TestMPIDivergenceStopsEveryRank runs 6 updates on 2 ranks whose learning
// rates differ (rank 1's is twice rank 0's), so their parameters part at the
// first update. Every rank must stop with an error at the first checksum:
// step 2 with CheckEvery 2, step 6 (the evaluation) with CheckEvery 0; ranks
// with equal options finish.
func TestMPIDivergenceStopsEveryRank(t *testing.T) {
	if rankWorld != nil {
		divergeOnRank(t)
		return
	}
	out, err := mpitest.Command(t, "2", nil, os.Args[0], "-test.run", "^TestMPIDivergenceStopsEveryRank$", "-test.count=1").CombinedOutput()
	if err != nil {
		t.Fatalf("mpirun: %v\n%s", err, out)
	}
	for _, want := range []string{
		"rank 0, check every 2, same: ok", "rank 1, check every 2, same: ok", "PASS",
		"rank 0, check every 2, diverged: step 2: ranks diverged", "rank 1, check every 2, diverged: step 2: ranks diverged",
		"rank 0, check every 0, diverged: step 6: ranks diverged", "rank 1, check every 0, diverged: step 6: ranks diverged",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("no line %q in the ranks' output:\n%s", want, out)
		}
	}
}

// divergeOnRank is a rank's side of TestMPIDivergenceStopsEveryRank: it
// prints one line per run, "rank R, check every K, same|diverged: ok" or
// the run's error.
func divergeOnRank(t *testing.T) {
	for _, every := range []int{2, 0} {
		for _, diverge := range []bool{false, true} {
			if every == 0 && !diverge {
				continue
			}
			f := newFixture(t)
			opt := options(t.TempDir(), 6)
			opt.EvalEvery, opt.SaveEvery, opt.CheckEvery, opt.World = 6, 6, every, rankWorld
			if diverge && rankWorld.Rank() == 1 {
				opt.LRFactor = new(*opt.LRFactor * 2)
			}
			tr, err := New(f.m, f.params, f.data, opt, nil)
			if err == nil {
				err = tr.Run(context.Background())
			}
			result, name := "ok", map[bool]string{false: "same", true: "diverged"}[diverge]
			if err != nil {
				result = err.Error()
			}
			fmt.Printf("rank %d, check every %d, %s: %s\n", rankWorld.Rank(), every, name, result)
		}
	}
}
