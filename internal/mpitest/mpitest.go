// Package mpitest starts programs under mpirun for the tests of the mpi build
// tag.
package mpitest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
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

// RankPID is the process id of the given rank among the children of the
// mpirun whose process id is mpirun (Linux: it reads /proc), or 0 if there is
// no such rank (yet).
func RankPID(mpirun, rank int) int {
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil || parentPID(pid) != mpirun {
			continue
		}
		env, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		for _, kv := range bytes.Split(env, []byte{0}) {
			if string(kv) == fmt.Sprintf("OMPI_COMM_WORLD_RANK=%d", rank) {
				return pid
			}
		}
	}
	return 0
}

// parentPID is the parent process id of pid, from /proc/PID/stat (whose
// second field, the command in parentheses, may hold spaces), or 0.
func parentPID(pid int) int {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	i := bytes.LastIndexByte(stat, ')')
	if err != nil || i < 0 {
		return 0
	}
	var state string
	var ppid int
	fmt.Sscan(string(stat[i+1:]), &state, &ppid)
	return ppid
}
