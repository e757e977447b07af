//go:build mpi

package dist

import (
	"runtime"

	"cogentcore.org/lab/base/mpi"
)

// init locks the main goroutine to the main thread, which calls Join:
// under MPI_THREAD_FUNNELED only that thread may call MPI.
func init() { runtime.LockOSThread() }

// initMPI starts MPI, asking for MPI_THREAD_MULTIPLE; an MPI without it
// still works, as the main thread is locked.
func initMPI() error {
	if !mpi.IsOn() {
		_ = mpi.InitThreadSafe() // a lower thread level is enough, see init
	}
	return nil
}
