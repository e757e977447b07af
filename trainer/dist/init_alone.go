//go:build !mpi

package dist

// initMPI does nothing: without the mpi tag the world is one process.
func initMPI() error { return nil }
