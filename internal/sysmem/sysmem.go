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
	return parseMeminfo(data)
}

// parseMeminfo finds "MemAvailable: N kB" in the text of /proc/meminfo.
func parseMeminfo(data []byte) (int64, bool) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 3 && f[0] == "MemAvailable:" && f[2] == "kB" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil || kb < 0 || kb > 1<<50 {
				return 0, false
			}
			return kb << 10, true
		}
	}
	return 0, false
}
