package sysmem

import (
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"
)

func TestFindKB(t *testing.T) {
	tests := []struct {
		text string
		want int64
		ok   bool
	}{
		{"MemTotal:       24000000 kB\nMemAvailable:   20000000 kB\n", 20000000 << 10, true},
		{"MemTotal:       24000000 kB\n", 0, false},
		{"MemAvailable: lots kB\n", 0, false},
		{"MemAvailable: -5 kB\n", 0, false},
		{"MemAvailable: 5 MB\n", 0, false},
	}
	for _, tt := range tests {
		got, ok := findKB([]byte(tt.text), "MemAvailable:")
		if got != tt.want || ok != tt.ok {
			t.Errorf("findKB(%q) = %d, %v; want %d, %v", tt.text, got, ok, tt.want, tt.ok)
		}
	}
}

func TestAvailableOnLinux(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("MemAvailable is Linux's")
	}
	n, ok := Available()
	if !ok || n <= 0 {
		t.Fatalf("Available() = %d, %v on Linux", n, ok)
	}
	if n, ok := PeakRSS(); !ok || n <= 0 {
		t.Fatalf("PeakRSS() = %d, %v on Linux", n, ok)
	}
}

// TestLowest builds /proc and /sys/fs/cgroup trees and checks that the
// lowest limit wins and is named.
func TestLowest(t *testing.T) {
	const meminfo = "MemTotal: 24000000 kB\nMemAvailable: 20000000 kB\n" // 19.1 GB
	tests := []struct {
		name   string
		files  map[string]string
		bytes  int64
		source string
	}{
		{"MemAvailable alone", map[string]string{"proc/meminfo": meminfo}, 20000000 << 10, "MemAvailable in /proc/meminfo"},
		{"cgroup v2 limit", map[string]string{
			"proc/meminfo": meminfo, "proc/self/cgroup": "0::/job\n",
			"sys/fs/cgroup/job/memory.max": "1073741824\n", "sys/fs/cgroup/job/memory.current": "73741824\n",
			"sys/fs/cgroup/memory.max": "max\n",
		}, 1<<30 - 73741824, "cgroup v2 /sys/fs/cgroup/job/memory.max"},
		{"cgroup v2 parent's limit is lower", map[string]string{
			"proc/meminfo": meminfo, "proc/self/cgroup": "0::/a/b\n",
			"sys/fs/cgroup/a/b/memory.max": "max\n", "sys/fs/cgroup/a/memory.max": "500000000\n",
		}, 500000000, "cgroup v2 /sys/fs/cgroup/a/memory.max"},
		{"cgroup v1 limit", map[string]string{
			"proc/meminfo": meminfo, "proc/self/cgroup": "4:memory:/box\n3:cpu:/\n0::/\n",
			"sys/fs/cgroup/memory/box/memory.limit_in_bytes": "2000000000\n", "sys/fs/cgroup/memory/box/memory.usage_in_bytes": "1000000000\n",
			"sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n",
		}, 1000000000, "cgroup v1 /sys/fs/cgroup/memory/box/memory.limit_in_bytes"},
		{"cgroup v1 without a limit", map[string]string{
			"proc/meminfo": meminfo, "proc/self/cgroup": "4:cpu,memory:/\n",
			"sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n",
		}, 20000000 << 10, "MemAvailable in /proc/meminfo"},
		{"usage above the limit", map[string]string{
			"proc/meminfo": meminfo, "proc/self/cgroup": "0::/\n",
			"sys/fs/cgroup/memory.max": "1000\n", "sys/fs/cgroup/memory.current": "5000\n",
		}, 0, "cgroup v2 /sys/fs/cgroup/memory.max"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, ok := lowest(writeTree(t, tt.files))
			if !ok || l.Bytes != tt.bytes || l.Source != tt.source {
				t.Errorf("lowest = %+v, %v; want %d bytes from %s", l, ok, tt.bytes, tt.source)
			}
		})
	}
	if _, ok := lowest(t.TempDir()); ok {
		t.Error("a system that reports nothing has a limit")
	}
}

// writeTree writes files (path under the root: text) under a new root and
// returns it.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, text := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestCheckSaysWhatAndHowMuch(t *testing.T) {
	avail := Limit{Bytes: 2 << 30, Source: "MemAvailable in /proc/meminfo"}
	if err := avail.Check("a batch", 2<<30); err != nil {
		t.Fatalf("what fits: %v", err)
	}
	tests := []struct {
		need float64
		want string
	}{
		{3 << 30, "a batch: at least 3.0 GB needed, and this process may allocate 2.0 GB (lowest limit: MemAvailable in /proc/meminfo)"},
		{1e300, "a batch: at least 4294967296.0 GB needed, and this process may allocate 2.0 GB (lowest limit: MemAvailable in /proc/meminfo)"},
	}
	for _, tt := range tests {
		if err := avail.Check("a batch", tt.need); err == nil || err.Error() != tt.want {
			t.Errorf("need %g: error %v, want %q", tt.need, err, tt.want)
		}
	}
}

// TestHeapNeedFollowsGOGC: the collector lets the heap grow by GOGC
// percent of what is live before it collects, so what a heap of live bytes
// needs follows the setting.
func TestHeapNeedFollowsGOGC(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	if got := HeapNeed(1000); got != 2000 {
		t.Errorf("GOGC 100: HeapNeed(1000) = %v, want 2000", got)
	}
	debug.SetGCPercent(25)
	if got := HeapNeed(1000); got != 1250 {
		t.Errorf("GOGC 25: HeapNeed(1000) = %v, want 1250", got)
	}
	debug.SetGCPercent(-1)
	if got := HeapNeed(1000); got != 2000 {
		t.Errorf("GOGC off: HeapNeed(1000) = %v, want 2000 (as 100)", got)
	}
}
