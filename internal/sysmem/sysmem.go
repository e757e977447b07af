// Package sysmem tells how much memory this machine, and the container or
// control group the process runs in, can still give a process.
package sysmem

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Limit is memory that a process can still allocate, and what limits it.
type Limit struct {
	Bytes int64
	// Source names the limit: "MemAvailable in /proc/meminfo", or a
	// control group's file such as "cgroup v2 /sys/fs/cgroup/memory.max".
	Source string
}

// String writes the limit as "N GB (lowest limit: SOURCE)".
func (l Limit) String() string {
	return fmt.Sprintf("%s (lowest limit: %s)", Bytes(l.Bytes), l.Source)
}

// Bytes writes n in GB or MB.
func Bytes(n int64) string {
	if n >= 1<<30 {
		return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
	}
	return fmt.Sprintf("%.0f MB", float64(n)/(1<<20))
}

// Available returns the bytes of memory available to new allocations, the
// least of the limits Lowest finds, and false where the system does not
// say.
func Available() (int64, bool) {
	l, ok := Lowest()
	return l.Bytes, ok
}

// Lowest returns the lowest of the limits on new allocations: the
// machine's MemAvailable, and for the process's control group and each
// group above it, a cgroup v2 memory.max less its memory.current, and a
// cgroup v1 memory.limit_in_bytes less its memory.usage_in_bytes. In a
// container with a memory limit, the limit is usually lowest: a process
// that passed a check of MemAvailable alone was killed with no message.
// Under ulimit -v (RLIMIT_AS), the limit less the address space the
// process has mapped is one more. It returns false where the system
// reports none of them.
func Lowest() (Limit, bool) {
	l, ok := lowest("/")
	if as, limited := addressSpace(); limited && (!ok || as.Bytes < l.Bytes) {
		return as, true
	}
	return l, ok
}

// lowest is Lowest on the file system under root (for tests).
func lowest(root string) (Limit, bool) {
	var best Limit
	found := false
	for _, l := range limits(root) {
		if !found || l.Bytes < best.Bytes {
			best, found = l, true
		}
	}
	return best, found
}

// unlimited is where a cgroup v1 limit means none (the kernel writes
// 9223372036854771712, the largest multiple of the page size).
const unlimited = 1 << 60

// limits lists the limits found under root.
func limits(root string) []Limit {
	var out []Limit
	if data, err := os.ReadFile(filepath.Join(root, "proc/meminfo")); err == nil {
		if n, ok := findKB(data, "MemAvailable:"); ok {
			out = append(out, Limit{n, "MemAvailable in /proc/meminfo"})
		}
	}
	groups, err := os.ReadFile(filepath.Join(root, "proc/self/cgroup"))
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(groups), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 || !path.IsAbs(f[2]) {
			continue
		}
		switch {
		case f[0] == "0" && f[1] == "":
			for _, mount := range []string{"sys/fs/cgroup", "sys/fs/cgroup/unified"} {
				out = append(out, groupLimits(root, mount, f[2], "v2", "memory.max", "memory.current")...)
			}
		case slices.Contains(strings.Split(f[1], ","), "memory"):
			out = append(out, groupLimits(root, "sys/fs/cgroup/memory", f[2], "v1", "memory.limit_in_bytes", "memory.usage_in_bytes")...)
		}
	}
	return out
}

// groupLimits reads the limit and usage files of the group at path under
// the mount, and of each group above it.
func groupLimits(root, mount, group, version, limitFile, usageFile string) []Limit {
	var out []Limit
	for g := path.Clean(group); ; g = path.Dir(g) {
		dir := filepath.Join(root, mount, g)
		limit, ok := readInt(filepath.Join(dir, limitFile))
		if ok && limit < unlimited {
			usage, _ := readInt(filepath.Join(dir, usageFile))
			out = append(out, Limit{max(limit-usage, 0), fmt.Sprintf("cgroup %s %s", version, filepath.Join("/", mount, g, limitFile))})
		}
		if g == "/" {
			return out
		}
	}
}

// readInt reads a file holding one non-negative integer ("max" and other
// words are not).
func readInt(p string) (int64, bool) {
	data, err := os.ReadFile(p)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	return n, err == nil && n >= 0
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
