// Package mpitest starts programs under mpirun for the tests of the mpi build
// tag.
package mpitest

import (
	"os"
	"os/exec"
	"testing"
)

// Command is name run under mpirun with np ranks, on this machine, with the
// settings a container needs: root allowed, more ranks than cores, no core
// binding (which would pin each rank's Go threads to one core), and the ob1
// transport without UCX's signal handlers (which break Go's). extra goes
// before the program (say, --mca btl self,tcp). A test that needs mpirun
// fails if it is missing and CI=true, and skips otherwise.
func Command(t testing.TB, np string, extra []string, name string, args ...string) *exec.Cmd {
	t.Helper()
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		msg := "mpirun not found: apt-get install openmpi-bin libopenmpi-dev"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	full := append([]string{"-np", np, "--oversubscribe", "--bind-to", "none"}, extra...)
	cmd := exec.Command(mpirun, append(append(full, name), args...)...)
	cmd.Env = append(os.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
		"OMPI_MCA_pml=ob1", "UCX_ERROR_SIGNALS=")
	return cmd
}
