//go:build !mpi

package dist

import (
	"strings"
	"testing"
)

// TestJoinAlone: without the mpi tag, a process started alone is rank 0 of
// 1, and one that mpirun started as a rank among several is refused.
func TestJoinAlone(t *testing.T) {
	for _, tc := range []struct {
		env     string
		refused bool
	}{{"", false}, {"1", false}, {"2", true}, {"junk", false}} {
		t.Setenv("OMPI_COMM_WORLD_SIZE", tc.env)
		w, err := Join()
		if tc.refused {
			if err == nil || !strings.Contains(err.Error(), "-tags mpi") {
				t.Errorf("OMPI_COMM_WORLD_SIZE=%q: error %v, want one saying to build with -tags mpi", tc.env, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("OMPI_COMM_WORLD_SIZE=%q: %v", tc.env, err)
		}
		if w.Rank() != 0 || w.Size() != 1 {
			t.Errorf("OMPI_COMM_WORLD_SIZE=%q: rank %d of %d, want rank 0 of 1", tc.env, w.Rank(), w.Size())
		}
		w.Leave()
	}
}
