package sysmem

import "testing"

// FuzzLimits reads arbitrary /proc/self/cgroup and limit files: the limit
// found is never negative, and never a panic.
func FuzzLimits(f *testing.F) {
	f.Add("0::/job\n", "1073741824\n", "5\n")
	f.Add("4:memory:/box\n", "9223372036854771712\n", "x")
	f.Add("0::../../etc\n", "max\n", "")
	f.Add("0::/a/b/c\n", "-5\n", "99999999999999999999")
	f.Fuzz(func(t *testing.T, groups, limit, usage string) {
		root := writeTree(t, map[string]string{
			"proc/self/cgroup": groups, "proc/meminfo": "MemAvailable: 1000 kB\n",
			"sys/fs/cgroup/memory.max": limit, "sys/fs/cgroup/memory.current": usage,
			"sys/fs/cgroup/memory/memory.limit_in_bytes": limit, "sys/fs/cgroup/memory/memory.usage_in_bytes": usage,
		})
		l, ok := lowest(root)
		if !ok || l.Bytes < 0 || l.Bytes > 1000<<10 || l.Source == "" {
			t.Fatalf("lowest = %+v, %v", l, ok)
		}
	})
}
