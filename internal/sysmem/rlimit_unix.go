//go:build linux

package sysmem

import (
	"fmt"
	"os"
	"syscall"
)

// addressSpace is the limit of ulimit -v (RLIMIT_AS) less the address
// space the process has mapped (VmSize) and the runtime's reserve (see
// Reserve), where a limit is set (none is RLIM_INFINITY, above
// unlimited): a process under it that passed a check of the machine's
// memory died with "out of memory".
func addressSpace() (Limit, bool) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &r); err != nil || r.Cur > unlimited {
		return Limit{}, false
	}
	var used int64
	if data, err := os.ReadFile("/proc/self/status"); err == nil {
		used, _ = findKB(data, "VmSize:")
	}
	return Limit{max(int64(r.Cur)-used-Reserve, 0), fmt.Sprintf("ulimit -v (RLIMIT_AS) less the process's VmSize and %d MB the runtime reserves", Reserve>>20)}, true
}
