//go:build !mpi

package dist

import (
	"os"
	"strconv"

	"github.com/pkg/errors"
)

// initMPI refuses to run as one of several ranks: without the mpi tag each
// process mpirun starts would train alone, every one writing the same
// files. Open MPI tells its ranks the world's size in OMPI_COMM_WORLD_SIZE.
func initMPI() error {
	if n, err := strconv.Atoi(os.Getenv("OMPI_COMM_WORLD_SIZE")); err == nil && n > 1 {
		return errors.Errorf("started by mpirun as one of %d ranks, but built without MPI: build with -tags mpi (see README, \"Several processes and machines\")", n)
	}
	return nil
}
