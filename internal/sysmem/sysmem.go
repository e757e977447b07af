// Package sysmem tells how much memory this machine can still give a process.
package sysmem

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
)

// Available returns the bytes of memory available to new allocations
// without swapping (Linux's MemAvailable), and false where the system does
// not say.
func Available() (int64, bool) {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	return findKB(data, "MemAvailable:")
}

// findKB finds the line "KEY N kB" in the text of a /proc file and returns
// N kB in bytes.
func findKB(data []byte, key string) (int64, bool) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 3 && f[0] == key && f[2] == "kB" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil || kb < 0 || kb > 1<<50 {
				return 0, false
			}
			return kb << 10, true
		}
	}
	return 0, false
}

// PeakRSS returns the most resident memory this process has had, in bytes
// (Linux's VmHWM), and false where the system does not say.
func PeakRSS() (int64, bool) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	return findKB(data, "VmHWM:")
}
